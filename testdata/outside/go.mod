module example.com/outside

go 1.25.0

require github.com/monbandb/monban v0.0.0

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/golang/snappy v1.0.0 // indirect
	github.com/google/btree v1.1.3 // indirect
)

replace github.com/monbandb/monban => ../..
