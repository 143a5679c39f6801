module github.com/baton-dev/baton/clients/go

go 1.19
