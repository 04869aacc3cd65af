//! The async proxy: (b) expect-tx bytes, (c) a TMA store without `fence.proxy.async`, (d) an
//! accumulator read before `wgmma.wait_group`, (e) a stage freed before its `wgmma` retires.
