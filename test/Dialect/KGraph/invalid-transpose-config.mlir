// RUN: kgraph-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{tile_in must be a power of two in [vector_width, 256], got 48}}
func.func private @f() attributes {c = #kgraph.transpose_config<tile_in = 48, tile_out = 64, vector_width = 4, block_size = 256, smem_padding = 1>}

// -----

// expected-error @+1 {{tile_out must be a power of two in [vector_width, 256], got 2}}
func.func private @f() attributes {c = #kgraph.transpose_config<tile_in = 64, tile_out = 2, vector_width = 4, block_size = 256, smem_padding = 1>}

// -----

// expected-error @+1 {{vector_width must be a power of two in [1, 16], got 3}}
func.func private @f() attributes {c = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 3, block_size = 256, smem_padding = 1>}

// -----

// expected-error @+1 {{block_size must be a multiple of 32 in [32, 1024], got 100}}
func.func private @f() attributes {c = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 4, block_size = 100, smem_padding = 1>}

// -----

// expected-error @+1 {{block_size 512 must divide the tile's 256 vectors (tile_in * tile_out / vector_width)}}
func.func private @f() attributes {c = #kgraph.transpose_config<tile_in = 32, tile_out = 32, vector_width = 4, block_size = 512, smem_padding = 1>}

// -----

// expected-error @+1 {{smem_padding must be in [0, 16], got -1}}
func.func private @f() attributes {c = #kgraph.transpose_config<tile_in = 64, tile_out = 64, vector_width = 4, block_size = 256, smem_padding = -1>}
