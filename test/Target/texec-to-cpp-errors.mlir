// RUN: not trident-translate --texec-to-cpp %s 2>&1 | FileCheck %s

// CHECK: error: 'texec.optimizer' op stages with different optimizers are not translated
texec.program @two attributes {dp = 1 : i64, tp = 1 : i64, pp = 2 : i64,
    vpp = 1 : i64, micro_batches = 1 : i64, micro_batch_size = 1 : i64,
    seq_len = 4 : i64, vocab = 16 : i64, zero_stage = 0 : i64,
    schedule = "1f1b"} {
  texec.group "dp" axes ["dp"]
  texec.group "pp" axes ["pp"]
  texec.stage 0 {
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.optimizer "adam" group "dp" zero 0 {lr = 1.0e-03 : f64}
  }
  texec.stage 1 {
    texec.chunk 0 forward {
      texec.save
    } backward {
      texec.end
    }
    texec.schedule "1f1b" [0, 0, 0, 1, 0, 0]
    texec.optimizer "sgd" group "dp" zero 0 {lr = 1.0e-03 : f64}
  }
}
