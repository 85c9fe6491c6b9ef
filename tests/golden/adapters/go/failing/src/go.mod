module example.com/regbenchfailing

go 1.18
