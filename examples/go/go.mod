module github.com/baton-dev/baton/examples/go

go 1.19

require github.com/baton-dev/baton/clients/go v1.1.0

replace github.com/baton-dev/baton/clients/go => ../../clients/go
