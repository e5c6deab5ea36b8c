//! `sysgauge net`: the net family alone, over loopback (an in-process
//! service) or to `--peer` (a machine running `sysgauge listen --serve`).
//! Same ids and records as the net slice of `sysgauge run`; prints the
//! summary table, the net digest (Gbit/s, p99, saturation) and findings.

use crate::cli::NetArgs;
use crate::config::MeasureConfig;
use crate::exit::Exit;
use crate::measure;
use crate::netconfig::net_options;
use anyhow::Result;
use std::sync::Arc;
use sysgauge_net::net;

pub fn run(args: NetArgs) -> Result<Exit> {
    let cfg = MeasureConfig::from_args(&args.measure)?;
    let options = Arc::new(net_options(&args)?);
    let benches = net::benchmarks(&options);
    let cancel = crate::signals::install()?;
    let outcome = measure::execute("net", &cfg, &benches, &cancel, Vec::new())?;
    let text = measure::family_text(&net::FAMILY, &outcome.record);
    measure::finish(&cfg, &outcome, text)
}
