module example.com/regbenchgolden

go 1.18
