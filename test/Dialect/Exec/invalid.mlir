// RUN: trident-opt %s -split-input-file -verify-diagnostics

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{must have a static shape}}
      %x = texec.recv from 0 : tensor<?x4xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

// expected-error@+1 {{'tp' must be >= 1, got 0}}
texec.program @p attributes {dp = 1 : i64, tp = 0 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 1 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
}

// -----

// expected-error@+1 {{'precision' must be "f32" or "bf16", got "fp8"}}
texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 1 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b", precision = "fp8"} {
}

// -----

// expected-error@+1 {{'zero_stage' must be 0..3, got 4}}
texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 1 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 4 : i64, schedule = "1f1b"} {
}

// -----

// expected-error@+1 {{unknown schedule 'zb'}}
texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 1 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "zb"} {
}

// -----

// expected-error@+1 {{has 0 stages but pp = 1}}
texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 1 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{group 'tp' is declared twice}}
  texec.group "tp" axes ["tp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{unknown axis 'xp'}}
  texec.group "e" axes ["xp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{axis 'dp' is listed twice}}
  texec.group "e" axes ["dp", "dp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{'members' needs exactly one axis}}
  texec.group "e" axes ["dp", "tp"] members [0]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{member 2 is outside the axis (size 2)}}
  texec.group "e" axes ["dp"] members [2]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{'members' must be strictly increasing}}
  texec.group "e" axes ["dp"] members [1, 0]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{needs at least one axis}}
  texec.group "e" axes []
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    // expected-error@+1 {{parameter 'w' is declared twice}}
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{has more than one texec.optimizer}}
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.optimizer "adam" group "dp" zero 0 {lr = 1.0e-03 : f64}
    texec.optimizer "adam" group "dp" zero 0 {lr = 1.0e-03 : f64}
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{needs exactly one texec.schedule, has 0}}
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    // expected-error@+1 {{is not allowed directly in a texec.stage}}
    %w = texec.param_ref "w" : tensor<4x8xf32>
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  // expected-error@+1 {{index 1 is outside 0..0}}
  texec.stage 1 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    // expected-error@+1 {{global shape has rank 1 but the shard type has rank 2}}
    texec.param "a" global [8] init "ones" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    // expected-error@+1 {{global dimension 0 (7) is not divisible by the 2 ranks of axis 'tp'}}
    texec.param "a" global [7] split 0 over "tp" init "ones" : tensor<3xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    // expected-error@+1 {{shard dimension 0 is 8, expected 4}}
    texec.param "a" global [8] split 0 over "tp" init "ones" : tensor<8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    // expected-error@+1 {{split dimension 1 is outside the rank 1}}
    texec.param "a" global [8] split 1 over "tp" init "ones" : tensor<8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    // expected-error@+1 {{unknown axis 'xp'}}
    texec.param "a" global [8] split 0 over "xp" init "ones" : tensor<8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    // expected-error@+1 {{unknown init 'normal'}}
    texec.param "a" global [8] init "normal" : tensor<8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    // expected-error@+1 {{backward arguments (1) must match the texec.save operands (0)}}
    texec.chunk 0 forward {
      texec.save
    } backward {
    ^bb0(%a: tensor<4xf32>):
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    // expected-error@+1 {{index 1 is outside 0..0}}
    texec.chunk 1 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{input 'images' needs a positive range (only tokens and labels come from the corpus)}}
      %i = texec.input "images" : tensor<2x4xi32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{type must be micro_batch_size x seq_len / cp (2x4)}}
      %i = texec.input "tokens" : tensor<2x5xi32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{names parameter 'v', which stage 0 does not declare}}
      %w = texec.param_ref "v" : tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{differs from parameter 'w'}}
      %w = texec.param_ref "w" : tensor<8x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 3 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{use texec.param_gather}}
      %w = texec.param_ref "w" : tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{is only used under ZeRO-3}}
      %w = texec.param_gather "w" group "dp" : tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.param "g" global [3, 8] init "ones" : tensor<3x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      %g = texec.kernel "gelu"(%w) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      texec.save
    } backward {
      %z = texec.param_ref "g" : tensor<3x8xf32>
      // expected-error@+1 {{differs from parameter 'w'}}
      texec.accumulate_grad "w", %z : tensor<3x8xf32>
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{loss must be tensor<1xf32>}}
      texec.loss %w : tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{unknown kernel 'conv'}}
      %y = texec.kernel "conv"(%w) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{kernel 'linear' takes 2 inputs, got 1}}
      %y = texec.kernel "linear"(%w) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{kernel 'gelu' gives 1 results, got 2}}
      %y:2 = texec.kernel "gelu"(%w) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{kernel 'layer_norm' needs config key 'eps'}}
      %y:3 = texec.kernel "layer_norm"(%w, %w, %w) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{kernel 'gelu' has no config key 'eps'}}
      %y = texec.kernel "gelu"(%w) config {eps = 1.0 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{config 'bias_axis' must name a grid axis}}
      %y = texec.kernel "linear_bias"(%w, %w, %w) config {bias_axis = "xp"} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.param "g" global [3, 8] init "ones" : tensor<3x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      %g = texec.param_ref "g" : tensor<3x8xf32>
      // expected-error@+1 {{kernel 'add' needs inputs and result of one type}}
      %y = texec.kernel "add"(%w, %g) : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{names group 'ep', which the program does not declare}}
      %y = texec.all_reduce %w group "ep" : tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{result dimension 0 must be 8, got 4}}
      %y = texec.all_gather %w group "tp" dim 0 : tensor<4x8xf32> -> tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{dim 2 is outside the rank 2}}
      %y = texec.all_gather %w group "tp" dim 2 : tensor<4x8xf32> -> tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{input and result must have one rank and element type}}
      %y = texec.all_gather %w group "tp" dim 0 : tensor<4x8xf32> -> tensor<32xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.param "g" global [3, 8] init "ones" : tensor<3x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "g" : tensor<3x8xf32>
      // expected-error@+1 {{dimension 0 (3) is not divisible by the group size 2}}
      %y = texec.reduce_scatter %w group "tp" dim 0 : tensor<3x8xf32> -> tensor<1x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.param "g" global [3, 8] init "ones" : tensor<3x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "g" : tensor<3x8xf32>
      // expected-error@+1 {{dimension 0 is not divisible by the group size 2}}
      %y = texec.all_to_all %w group "tp" dim 0 : tensor<3x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{dim 5 is outside the rank 2}}
      %y = texec.all_to_all %w group "tp" dim 5 : tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{peer chunk 1 is outside 0..0}}
      %x = texec.recv from 1 : tensor<4xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<4x8xf32>
      // expected-error@+1 {{peer chunk 0 is not adjacent to chunk 0}}
      texec.send %w to 0 : tensor<4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{kind 'gpipe' differs from the program's schedule '1f1b'}}
    texec.schedule "gpipe" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{actions must be (kind, micro-batch, chunk) triples}}
    texec.schedule "1f1b" [0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{action 1 has kind 2}}
    texec.schedule "1f1b" [0, 0, 0, 2, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{action 0 names micro-batch 1 chunk 0, outside the program's 1 x 1}}
    texec.schedule "1f1b" [0, 1, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{micro-batch 0 chunk 0 is forwarded twice}}
    texec.schedule "1f1b" [0, 0, 0, 0, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{micro-batch 0 chunk 0 is backwarded before its forward}}
    texec.schedule "1f1b" [1, 0, 0, 0, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{steps cover 3 actions, not the 2 of the schedule}}
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0] {steps = array<i64: 1, 2>}
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{steps must hold positive action counts, got 0}}
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0] {steps = array<i64: 2, 0>}
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{micro-batch 0 chunk 0 is backwarded twice}}
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    // expected-error@+1 {{must run every one of the 1 (micro-batch, chunk) pairs forward and backward}}
    texec.schedule "1f1b" [0, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    // expected-error@+1 {{names group 'ep'}}
    texec.grad_all_reduce group "ep"
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    // expected-error@+1 {{names parameter 'v', which stage 0 does not declare}}
    texec.grad_all_reduce group "tp" params ["v"]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    // expected-error@+1 {{unknown optimizer 'lamb'}}
    texec.optimizer "lamb" group "dp" zero 0 {lr = 1.0e-03 : f64}
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    // expected-error@+1 {{zero stage 1 differs from the program's 0}}
    texec.optimizer "adam" group "dp" zero 1 {lr = 1.0e-03 : f64}
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [8, 8] split 0 over "tp" init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    // expected-error@+1 {{'lr' must be positive}}
    texec.optimizer "adam" group "dp" zero 0 {lr = 0.0 : f64}
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'rope' needs integer heads, head_dim > 0, an even rotary_dim in (0, head_dim] and a float theta > 1}}
      %y = texec.kernel "rope"(%w) config {heads = 2 : i64, head_dim = 4 : i64, rotary_dim = 3 : i64, theta = 1.0e+04 : f64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'rope_bwd' needs a result of the input's type whose last dimension is heads * head_dim}}
      %y = texec.kernel "rope_bwd"(%w) config {heads = 4 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64, theta = 1.0e+04 : f64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

// expected-error@+1 {{'seq_len' (6) must be divisible by cp (4)}}
texec.program @p attributes {dp = 1 : i64, cp = 4 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 6 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
}

// -----

texec.program @p attributes {dp = 1 : i64, cp = 2 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 8 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "cp" axes ["cp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      // expected-error@+1 {{type must be micro_batch_size x seq_len / cp (2x4)}}
      %i = texec.input "tokens" : tensor<2x8xi32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, cp = 2 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 8 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "cp" axes ["cp"]
  texec.stage 0 {
    texec.param "q" global [2, 4, 16] init "uniform" : tensor<2x4x16xf32>
    texec.chunk 0 forward {
      %q = texec.param_ref "q" : tensor<2x4x16xf32>
      // expected-error@+1 {{kernel 'attention' needs [batch, seq, features] q, k, v with 2 key position(s) per query position}}
      %o:2 = texec.kernel "attention"(%q, %q, %q) config {cp_axis = "cp", head_dim = 16 : i64, heads = 1 : i64, kv_heads = 1 : i64} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16xf32>, tensor<2x1x4x8xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.param "r" global [8, 2] init "uniform" : tensor<8x2xf32>
    texec.param "wi" global [2, 8, 16] init "uniform" : tensor<2x8x16xf32>
    texec.param "wo" global [2, 16, 8] init "uniform" : tensor<2x16x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      %r = texec.param_ref "r" : tensor<8x2xf32>
      %wi = texec.param_ref "wi" : tensor<2x8x16xf32>
      %wo = texec.param_ref "wo" : tensor<2x16x8xf32>
      // expected-error@+1 {{kernel 'moe' needs integer experts >= top_k >= 1}}
      %y = texec.kernel "moe"(%x, %r, %wi, %wo) config {activation = "silu", experts = 2 : i64, top_k = 3 : i64} : (tensor<2x4x8xf32>, tensor<8x2xf32>, tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.param "r" global [8, 2] init "uniform" : tensor<8x2xf32>
    texec.param "wi" global [2, 8, 16] init "uniform" : tensor<2x8x16xf32>
    texec.param "wo" global [2, 16, 8] init "uniform" : tensor<2x16x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      %r = texec.param_ref "r" : tensor<8x2xf32>
      %wi = texec.param_ref "wi" : tensor<2x8x16xf32>
      %wo = texec.param_ref "wo" : tensor<2x16x8xf32>
      // expected-error@+1 {{kernel 'moe' needs activation gelu, gelu_tanh, silu or relu}}
      %y = texec.kernel "moe"(%x, %r, %wi, %wo) config {activation = "tanh", experts = 2 : i64, top_k = 1 : i64} : (tensor<2x4x8xf32>, tensor<8x2xf32>, tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    // expected-error@+1 {{names group 'edp', which the program does not declare}}
    texec.param "w" global [8] init "ones" data "edp" : tensor<8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

// expected-error@+1 {{'ep' (3) must divide dp (4)}}
texec.program @p attributes {dp = 4 : i64, ep = 3 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  // expected-error@+1 {{several axes must be ["dp", "cp"] or ["edp", "cp"]}}
  texec.group "dptp" axes ["dp", "tp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, ep = 2 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  // expected-error@+1 {{'members' along 'ep' is not supported (pp, dp, cp or tp)}}
  texec.group "e0" axes ["ep"] members [0]
  texec.stage 0 {
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'dropout' needs a float rate in (0, 1), an integer site >= 0, a [batch, seq, features] input of the result's type and global seq_len and features at least the local ones}}
      %y = texec.kernel "dropout"(%x) config {rate = 1.0 : f64, site = 0 : i64, seq_len = 4 : i64, features = 8 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'dropout' needs a float rate in (0, 1), an integer site >= 0, a [batch, seq, features] input of the result's type and global seq_len and features at least the local ones}}
      %y = texec.kernel "dropout"(%x) config {rate = 0.1 : f64, site = 0 : i64, seq_len = 4 : i64, features = 4 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'attention' with dropout needs a float rate in (0, 1), an integer site >= 0 and heads_total >= 1}}
      %y:2 = texec.kernel "attention"(%x, %x, %x) config {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, dropout = 0.1 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      // The saved tensor: [2, 2, 4, 4] probabilities or a [2, 2, 4]
      // log-sum-exp, not [2, 2, 4, 3].
      // expected-error@+1 {{kernel 'attention' saves the probabilities [batch, heads, seq, keys] or their rows' log-sum-exp [batch, heads, seq]}}
      %y:2 = texec.kernel "attention"(%x, %x, %x) config {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x3xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

// attention_bwd's input 4 is the forward's output, shaped as dy.
texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.param "w" global [2, 4, 4] init "uniform" : tensor<2x4x4xf32>
    texec.param "l" global [2, 2, 4] init "uniform" : tensor<2x2x4xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      %w = texec.param_ref "w" : tensor<2x4x4xf32>
      %l = texec.param_ref "l" : tensor<2x2x4xf32>
      // expected-error@+1 {{kernel 'attention_bwd' needs the forward's output (input 4) shaped as dy (input 0)}}
      %g:3 = texec.kernel "attention_bwd"(%x, %x, %x, %x, %w, %l) config {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x2x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

// A dropout's global sizes must be its block times the axes that split it:
// seq_len 8 on a 4-position block with no pos_axis / seq_axis would draw
// the masks of positions 0..3 on every rank.
texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'dropout' has global seq_len 8 and features 8, but its block and axes make 4 and 8}}
      %y = texec.kernel "dropout"(%x) config {rate = 0.1 : f64, site = 0 : i64, seq_len = 8 : i64, features = 8 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'attention' needs heads_total = heads x the size of head_axis (2 x 1), got 4}}
      %y:2 = texec.kernel "attention"(%x, %x, %x) config {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, dropout = 0.1 : f64, site = 3 : i64, heads_total = 4 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'attention' has site, heads_total or head_axis but no dropout}}
      %y:2 = texec.kernel "attention"(%x, %x, %x) config {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, site = 3 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "w" global [3, 8] init "ones" : tensor<3x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<3x8xf32>
      // expected-error@+1 {{must be in a chunk's backward region}}
      texec.accumulate_grad "w", %w : tensor<3x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{'tokens' comes from the corpus and takes no range}}
      %i = texec.input "tokens" range 2 : tensor<2x4xi32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{type must be micro_batch_size x seq_len / cp (2x4, or 2 ids, one per sample)}}
      %i = texec.input "token_types" range 2 : tensor<3xi32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      %lab = texec.input "labels" : tensor<2x4xi32>
      %l:2 = texec.kernel "cross_entropy"(%x, %lab) : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> (tensor<1xf32>, tensor<8xf32>)
      // expected-error@+1 {{scale must be positive, got -2}}
      texec.loss %l#0 scale -2.0 : tensor<1xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'select_token' needs [batch, seq, h] and [batch, h] tensors and an integer index inside the whole sequence}}
      %y = texec.kernel "select_token"(%x) config {index = 4 : i64} : (tensor<2x4x8xf32>) -> tensor<2x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'attention': bidirectional is a unit attribute and takes no window}}
      %y:2 = texec.kernel "attention"(%x, %x, %x) config {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, bidirectional, window = 2 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.param "w" global [12, 8] init "uniform" : tensor<12x8xf32>
    texec.param "b" global [8] init "zeros" : tensor<8xf32>
    texec.chunk 0 forward {
      // expected-error@+1 {{a float input takes no range or bag and must be micro_batch_size (2) x static sizes, got 'tensor<3x3x4x4xf32>'}}
      %i = texec.input "images" : tensor<3x3x4x4xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.param "w" global [12, 8] init "uniform" : tensor<12x8xf32>
    texec.param "b" global [8] init "zeros" : tensor<8xf32>
    texec.chunk 0 forward {
      %img = texec.input "images" : tensor<2x3x4x4xf32>
      %w = texec.param_ref "w" : tensor<12x8xf32>
      %b = texec.param_ref "b" : tensor<8xf32>
      // expected-error@+1 {{kernel 'patch_embed' needs images [b, C, side, side] with an integer patch dividing side, w [C*patch^2, h], b [h] and tokens [b, (side/patch)^2, h]}}
      %t = texec.kernel "patch_embed"(%img, %w, %b) config {patch = 2 : i64} : (tensor<2x3x4x4xf32>, tensor<12x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.param "w" global [12, 8] init "uniform" : tensor<12x8xf32>
    texec.param "b" global [8] init "zeros" : tensor<8xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      %w = texec.param_ref "w" : tensor<12x8xf32>
      // expected-error@+1 {{kernel 'position_add' needs x [b, s, h] and a position table [P, h] with a row for each of the s x 1 positions}}
      %y = texec.kernel "position_add"(%x, %w) : (tensor<2x4x8xf32>, tensor<12x8xf32>) -> tensor<2x4x9xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    // expected-error@+1 {{'padded' rounds a split dimension 0 up to a multiple of the axis size; this parameter needs no padding}}
    texec.param "w" global [8, 8] split 0 over "tp" padded init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    // expected-error@+1 {{this parameter is not split along dimension 0}}
    texec.param "w" global [8, 7] split 1 over "tp" padded init "uniform" : tensor<8x4xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    // expected-error@+1 {{shard dimension 0 is 7, expected 8}}
    texec.param "w" global [15, 8] split 0 over "tp" padded init "uniform" : tensor<7x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %logits = texec.input "x" : tensor<2x4x8xf32>
      %lab = texec.input "labels" : tensor<2x4xi32>
      // expected-error@+1 {{config 'vocab' (16) must be a size that the 2 ranks of axis 'tp' hold as 8 columns each with padding (not a multiple of 2)}}
      %loss, %lse = texec.kernel "cross_entropy"(%logits, %lab) config {vocab = 16 : i64, vocab_axis = "tp"} : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> (tensor<1xf32>, tensor<8xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %logits = texec.input "x" : tensor<2x4x8xf32>
      %lab = texec.input "labels" : tensor<2x4xi32>
      // expected-error@+1 {{config 'vocab' (the real size of a padded vocabulary) must be an integer, with a 'vocab_axis' inside a texec.program}}
      %loss, %lse = texec.kernel "cross_entropy"(%logits, %lab) config {vocab = 15 : i64} : (tensor<2x4x8xf32>, tensor<2x4xi32>) -> (tensor<1xf32>, tensor<8xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, ep = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    // expected-error@+1 {{the two splits need two dimensions and two axes, got dimension 0 over 'tp' twice}}
    texec.param "w" global [4, 8] split 0 over "ep" split 0 over "tp" init "uniform" : tensor<1x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, ep = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    // expected-error@+1 {{global dimension 2 (6) is not divisible by the 2 ranks of axis 'tp' times its 2 blocks}}
    texec.param "w" global [4, 8, 6] split 0 over "ep" split 2 over "tp" blocks 2 init "uniform" : tensor<2x8x3xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    // expected-error@+1 {{'blocks' 2 needs a split and must be at least 1}}
    texec.param "w" global [4, 8] blocks 2 init "uniform" : tensor<4x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.stage 0 {
    // expected-error@+1 {{this parameter is not split along dimension 0 (once, without blocks)}}
    texec.param "w" global [15, 8] split 0 over "tp" blocks 3 padded init "uniform" : tensor<8x8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'rope' config 'scaling' type 'yarn' needs 'attention_factor'}}
      %y = texec.kernel "rope"(%w) config {heads = 2 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64, theta = 1.0e+04 : f64, scaling = {type = "yarn", factor = 4.0 : f64, original_max_positions = 8 : i64, beta_fast = 32.0 : f64, beta_slow = 1.0 : f64, truncate = true}} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'rope_bwd' config 'scaling' must be a dictionary}}
      %y = texec.kernel "rope_bwd"(%w) config {heads = 2 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64, theta = 1.0e+04 : f64, scaling = "yarn"} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.param "s" global [3] init "uniform" : tensor<3xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      %s = texec.param_ref "s" : tensor<3xf32>
      // expected-error@+1 {{kernel 'attention_sinks' needs sinks of one value per local head}}
      %y:2 = texec.kernel "attention_sinks"(%x, %x, %x, %s) config {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<3xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.param "r" global [8, 2] init "uniform" : tensor<8x2xf32>
    texec.param "rb" global [2] init "zeros" : tensor<2xf32>
    texec.param "wi" global [2, 8, 16] init "uniform" : tensor<2x8x16xf32>
    texec.param "bi" global [2, 16] init "zeros" : tensor<2x16xf32>
    texec.param "wo" global [2, 8, 8] init "uniform" : tensor<2x8x8xf32>
    texec.param "bo" global [2, 4] init "zeros" : tensor<2x4xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      %r = texec.param_ref "r" : tensor<8x2xf32>
      %rb = texec.param_ref "rb" : tensor<2xf32>
      %wi = texec.param_ref "wi" : tensor<2x8x16xf32>
      %bi = texec.param_ref "bi" : tensor<2x16xf32>
      %wo = texec.param_ref "wo" : tensor<2x8x8xf32>
      %bo = texec.param_ref "bo" : tensor<2x4xf32>
      // expected-error@+1 {{kernel 'moe_biased' needs a router bias of one value per expert and expert biases [experts, w_in columns] and [experts, hidden]}}
      %y = texec.kernel "moe_biased"(%x, %r, %rb, %wi, %bi, %wo, %bo) config {activation = "silu", experts = 2 : i64, top_k = 1 : i64, gated} : (tensor<2x4x8xf32>, tensor<8x2xf32>, tensor<2xf32>, tensor<2x8x16xf32>, tensor<2x16xf32>, tensor<2x8x8xf32>, tensor<2x4xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "x" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.param "r" global [8, 2] init "uniform" : tensor<8x2xf32>
    texec.param "rb" global [2] init "zeros" : tensor<2xf32>
    texec.param "wi" global [2, 8, 16] init "uniform" : tensor<2x8x16xf32>
    texec.param "bi" global [2, 16] init "zeros" : tensor<2x16xf32>
    texec.param "wo" global [2, 8, 8] init "uniform" : tensor<2x8x8xf32>
    texec.param "bo" global [2, 4] init "zeros" : tensor<2x4xf32>
    texec.chunk 0 forward {
      %x = texec.param_ref "x" : tensor<2x4x8xf32>
      %r = texec.param_ref "r" : tensor<8x2xf32>
      %rb = texec.param_ref "rb" : tensor<2xf32>
      %wi = texec.param_ref "wi" : tensor<2x8x16xf32>
      %bi = texec.param_ref "bi" : tensor<2x16xf32>
      %wo = texec.param_ref "wo" : tensor<2x8x8xf32>
      %bo = texec.param_ref "bo" : tensor<2x4xf32>
      // expected-error@+1 {{kernel 'moe_biased' needs a positive float swiglu_limit on gated silu experts}}
      %y = texec.kernel "moe_biased"(%x, %r, %rb, %wi, %bi, %wo, %bo) config {activation = "gelu", experts = 2 : i64, top_k = 1 : i64, gated, swiglu_limit = 7.0 : f64} : (tensor<2x4x8xf32>, tensor<8x2xf32>, tensor<2xf32>, tensor<2x8x16xf32>, tensor<2x16xf32>, tensor<2x8x8xf32>, tensor<2x4xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'rope' needs an integer rotary_offset >= 0 with rotary_offset + rotary_dim <= head_dim}}
      %y = texec.kernel "rope"(%w) config {heads = 2 : i64, head_dim = 4 : i64, rotary_dim = 2 : i64, rotary_offset = 3 : i64, theta = 1.0e+04 : f64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'latent_key' needs integer heads, nope_dim, rope_dim > 0 and [b, s, heads*(nope_dim+rope_dim)] keys from [b, s, heads*nope_dim] and [b, s, rope_dim]}}
      %k = texec.kernel "latent_key"(%w, %w) config {heads = 2 : i64, nope_dim = 4 : i64, rope_dim = 2 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x12xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'attention' needs an integer v_head_dim > 0}}
      %o:2 = texec.kernel "attention"(%w, %w, %w) config {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, v_head_dim = 0 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'attention' needs a float scale > 0}}
      %o:2 = texec.kernel "attention"(%w, %w, %w) config {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = -1.0 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x2x4x4xf32>)
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.param "w" global [2, 4, 8] init "uniform" : tensor<2x4x8xf32>
    texec.chunk 0 forward {
      %w = texec.param_ref "w" : tensor<2x4x8xf32>
      // expected-error@+1 {{kernel 'rope': interleaved is a unit attribute}}
      %y = texec.kernel "rope"(%w) config {heads = 2 : i64, head_dim = 4 : i64, rotary_dim = 2 : i64, interleaved = 1 : i64, theta = 1.0e+04 : f64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

// A load-balanced selection bias is one unsplit value per expert.
texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    // expected-error@+1 {{load_balance is for a selection bias: one unsplit value per expert, got a shard of rank 1, split}}
    texec.param "b" global [8] split 0 over "tp" init "zeros" {load_balance = 1.0e-03 : f64} : tensor<4xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 2 : i64, tp = 2 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    // expected-error@+1 {{load_balance rate must be positive and finite, got 0}}
    texec.param "b" global [8] init "zeros" {load_balance = 0.0 : f64} : tensor<8xf32>
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

// DLRM kernels and bag inputs (docs/texec.md).
texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      // expected-error@+1 {{a bag input needs a positive range, a positive bag and type micro_batch_size x bag (2x3) of i32, got 'tensor<2x2xi32>'}}
      %s = texec.input "sparse.0" range 50 bag 3 : tensor<2x2xi32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      // expected-error@+1 {{a bag input needs a positive range}}
      %s = texec.input "sparse.0" bag 3 : tensor<2x3xi32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %r = texec.input "f1" : tensor<2x3x8xf32>
      // expected-error@+1 {{kernel 'bag_pool' pools f32 rows [b, bag, d] into [b, d]}}
      %p = texec.kernel "bag_pool"(%r) : (tensor<2x3x8xf32>) -> tensor<2x4xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %g = texec.input "f2" : tensor<2x8xf32>
      // expected-error@+1 {{config 'mean' is a unit attribute}}
      %d = texec.kernel "bag_pool_bwd"(%g) config {mean = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x3x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %a = texec.input "f3" : tensor<2x8xf32>
      %b = texec.input "f4" : tensor<2x8xf32>
      %c = texec.input "f5" : tensor<2x8xf32>
      // expected-error@+1 {{kernel 'dot_interaction': the interaction of 3 features [2, 8] is [2, 11], got 'tensor<2x10xf32>'}}
      %z = texec.kernel "dot_interaction"(%a, %b, %c) : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x10xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %a = texec.input "f6" : tensor<2x8xf32>
      // expected-error@+1 {{kernel 'dot_interaction' takes F >= 2 features and gives one result}}
      %z = texec.kernel "dot_interaction"(%a) : (tensor<2x8xf32>) -> tensor<2x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %a = texec.input "f7" : tensor<2x8xf32>
      %b = texec.input "f8" : tensor<2x4xf32>
      // expected-error@+1 {{kernel 'dot_interaction' needs f32 features of one type [b, d]}}
      %z = texec.kernel "dot_interaction"(%a, %b) : (tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<2x9xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %g = texec.input "f9" : tensor<2x9xf32>
      %a = texec.input "f10" : tensor<2x8xf32>
      %b = texec.input "f11" : tensor<2x8xf32>
      // expected-error@+1 {{kernel 'dot_interaction_bwd' takes the output gradient and F >= 2 features and gives F gradients}}
      %d = texec.kernel "dot_interaction_bwd"(%g, %a, %b) : (tensor<2x9xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %z = texec.input "f12" : tensor<2x1xf32>
      %y = texec.input "f13" : tensor<2x1xf32>
      // expected-error@+1 {{kernel 'binary_cross_entropy' takes f32 logits and int32 labels [b], one per logit}}
      %l = texec.kernel "binary_cross_entropy"(%z, %y) : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<1xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %z = texec.input "f14" : tensor<2x1xf32>
      %y = texec.input "labels" range 2 : tensor<2xi32>
      // expected-error@+1 {{kernel 'binary_cross_entropy_bwd' needs config key 'grad_scale'}}
      %d = texec.kernel "binary_cross_entropy_bwd"(%z, %y) : (tensor<2x1xf32>, tensor<2xi32>) -> tensor<2x1xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      // expected-error@+1 {{a float input takes no range or bag}}
      %s = texec.input "dense" bag 3 : tensor<2x3xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      // expected-error@+1 {{kernel 'dot_interaction_bwd' takes no features}}
      %d = texec.kernel "dot_interaction_bwd"() : () -> tensor<2x8xf32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}

// -----

texec.program @p attributes {dp = 1 : i64, tp = 1 : i64, pp = 1 : i64, vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 2 : i64, seq_len = 1 : i64, vocab = 1 : i64, zero_stage = 0 : i64, schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "tp" axes ["tp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      %z = texec.input "z" : tensor<2x1xf32>
      %y = texec.input "labels" range 2 : tensor<2xi32>
      // expected-error@+1 {{kernel 'binary_cross_entropy' gives the loss sum as tensor<1xf32>}}
      %l = texec.kernel "binary_cross_entropy"(%z, %y) : (tensor<2x1xf32>, tensor<2xi32>) -> tensor<1xi32>
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
  }
}
