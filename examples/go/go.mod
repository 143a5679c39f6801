module github.com/baton-dev/baton/examples/go

go 1.19

require github.com/baton-dev/baton/clients/go v1.2.0-SNAPSHOT

replace github.com/baton-dev/baton/clients/go => ../../clients/go
