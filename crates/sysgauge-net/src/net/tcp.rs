//! TCP cases: bulk throughput over one and several streams, and the rate of
//! short connections (connect, 16-byte request and reply, close).
//!
//! Throughput: each stream keeps one connection for the whole case (so the
//! congestion window and the kernel's buffer autotuning have grown after
//! calibration and warm-up, as in a long transfer); each repetition sends a
//! calibrated number of 256 KiB writes from a buffer filled before timing
//! as one block, and waits for the service to confirm the block's byte
//! count, so what is timed is data that arrived, and a short transfer is
//! caught. Both ends copy through
//! user memory as a real application does (no sendfile or splice), so the
//! number is what a program could get. The write size: on loopback the
//! copies dominate, and 256 KiB buffers (sender and receiver) stay in a
//! core's L2 cache while keeping the system-call count low
//! (docs/performance.md compares them with 128 KiB, iperf3's default, and
//! 1 MiB).
//!
//! Connection rate: the service closes first after its reply, so the
//! TIME_WAIT state stays on its side and thousands of connections per
//! second do not exhaust the client's ports.

use super::endpoint::{self, Endpoint};
use super::proto::{Hello, Mode, ServiceKey};
use super::{count_param, loopback_finding, target_param};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use sysgauge_core::{BenchError, Better, CancelToken, Metric, Params, Plan, Profile, RunCtx, Unit};
use sysgauge_family::util::{fill_pattern, mb_per_s, measure_rate_on_threads, metric};

/// Bytes per write, and the unit of calibration.
pub const CHUNK: usize = 256 << 10;

options_benchmark! {
    TcpThroughputBenchmark = "net.tcp-throughput",
    "TCP bulk throughput, 256 KiB writes, one or several streams (MB/s and Mbit/s)",
    Unit::MBps,
    Better::Higher
}

/// Stream counts for a profile: one, then a fixed ladder (or the number
/// `--streams` gives, and its double): the same on every machine. Tiny
/// measures one stream only, unless `--streams` asks for more: an option
/// given is honoured in every profile (as `cpu --threads` is).
pub fn stream_counts(profile: Profile, custom: Option<usize>) -> Vec<usize> {
    let many = custom.unwrap_or(2).max(1);
    let mut v = match profile {
        Profile::Tiny if custom.is_some() => vec![1, many],
        Profile::Tiny => vec![1],
        Profile::Quick => vec![1, many],
        Profile::Standard => vec![1, many, many * 2],
        Profile::Full => vec![1, many, many * 2, many * 4],
    };
    v.dedup();
    v
}

/// Sends `chunks` × [`CHUNK`] bytes as one block over the stream's
/// connection (opened on first use) and checks the service got them all.
/// Returns the bytes sent. After an error the connection is dropped.
fn transfer(
    conn: &Mutex<Option<TcpStream>>,
    addr: SocketAddr,
    data: &[u8],
    chunks: u64,
    key: Option<&ServiceKey>,
    cancel: &CancelToken,
) -> Result<f64, BenchError> {
    let total = chunks * data.len() as u64;
    let mut guard = conn
        .lock()
        .map_err(|_| BenchError::failed("a stream panicked"))?;
    let fresh = guard.is_none();
    let mut s = match guard.take() {
        Some(s) => s,
        None => endpoint::connect(addr)
            .map_err(|e| BenchError::failed(format!("cannot connect to {addr}: {e}")))?,
    };
    let sent = if fresh {
        s.write_all(&Hello::new(Mode::Sink, total).encode(key))
    } else {
        s.write_all(&total.to_be_bytes())
    };
    if let Err(e) = sent {
        return Err(BenchError::failed(endpoint::write_failed(&mut s, addr, e)));
    }
    for _ in 0..chunks {
        cancel.check()?;
        if let Err(e) = s.write_all(std::hint::black_box(data)) {
            return Err(BenchError::failed(endpoint::write_failed(&mut s, addr, e)));
        }
    }
    let reply = endpoint::read_reply(&mut s, addr).map_err(BenchError::failed)?;
    if reply.value != total {
        return Err(BenchError::failed(format!(
            "{addr} received {} bytes of the {total} sent",
            reply.value
        )));
    }
    *guard = Some(s);
    Ok(total as f64)
}

impl TcpThroughputBenchmark {
    fn cases(&self, plan: &Plan) -> Vec<Params> {
        self.options.service_cases(|| {
            stream_counts(plan.profile, self.options.streams)
                .into_iter()
                .map(|s| {
                    Params::new()
                        .with("target", target_param(&self.options))
                        .with("streams", s)
                })
                .collect()
        })
    }

    fn run(&self, ctx: &mut RunCtx, params: &Params) -> Result<Vec<Metric>, BenchError> {
        let streams = count_param(params, "streams", 1024)?;
        let (addr, remote, key) = {
            let ep = Endpoint::get(ctx, &self.options)?;
            (ep.tcp, ep.remote, ep.key.clone())
        };
        if !remote && streams == 1 {
            ctx.finding(loopback_finding());
        }
        // One shared read-only buffer: every stream sends the same bytes,
        // filled (and faulted in) before timing.
        let mut data = vec![0u8; CHUNK];
        fill_pattern(&mut data, 0x7cb);
        let cancel = ctx.cancel_token().clone();
        // One connection per stream, kept for the case, closed at its end.
        let conns: Vec<Mutex<Option<TcpStream>>> = (0..streams).map(|_| Mutex::new(None)).collect();
        let send = |t: usize, n: u64| match conns.get(t) {
            Some(c) => transfer(c, addr, &data, n, key.as_ref(), &cancel),
            None => Err(BenchError::failed("no connection for this stream")),
        };
        let samples = measure_rate_on_threads(ctx, streams, send)?;
        drop(conns);
        ctx.note_detail("write_size", CHUNK as u64);
        throughput_metrics(samples.into_iter().map(mb_per_s).collect())
    }
}

/// `throughput` (MB/s) and `bitrate` (Mbit/s) of a transfer or download;
/// eight times the MB/s is exactly bytes × 8 / 10⁶ in floating point (a
/// power of two scales without rounding).
pub(super) fn throughput_metrics(mbps: Vec<f64>) -> Result<Vec<Metric>, BenchError> {
    let bits: Vec<f64> = mbps.iter().map(|v| v * 8.0).collect();
    Ok(vec![
        metric("throughput", Unit::MBps, Better::Higher, mbps)?,
        metric("bitrate", Unit::Mbitps, Better::Higher, bits)?,
    ])
}

options_benchmark! {
    TcpConnectBenchmark = "net.tcp-connect",
    "TCP connections per second: connect, 16-byte request and reply, close",
    Unit::OpsPerSec,
    Better::Higher
}

/// One short connection: connect, hello, reply, wait for the service's
/// close, close.
fn one_connection(addr: SocketAddr, hello: &[u8]) -> Result<(), BenchError> {
    let mut s = endpoint::connect(addr).map_err(|e| {
        let hint = if e.raw_os_error() == Some(libc::EADDRNOTAVAIL) {
            " (out of local ports: too many connections in TIME_WAIT)"
        } else {
            ""
        };
        BenchError::failed(format!("cannot connect to {addr}: {e}{hint}"))
    })?;
    let _ = s.set_nodelay(true);
    s.write_all(hello)
        .map_err(|e| BenchError::failed(format!("sending to {addr}: {e}")))?;
    endpoint::read_reply(&mut s, addr).map_err(BenchError::failed)?;
    // The service closes first; reading its end of stream keeps TIME_WAIT
    // off our side.
    let mut one = [0u8; 1];
    match s.read(&mut one) {
        Ok(0) => Ok(()),
        Ok(_) => Err(BenchError::failed(format!(
            "{addr} sent more than its reply"
        ))),
        Err(e) => Err(BenchError::failed(format!(
            "waiting for {addr} to close: {e}"
        ))),
    }
}

impl TcpConnectBenchmark {
    fn cases(&self, _plan: &Plan) -> Vec<Params> {
        self.options
            .service_cases(|| vec![Params::new().with("target", target_param(&self.options))])
    }

    fn run(&self, ctx: &mut RunCtx, _params: &Params) -> Result<Vec<Metric>, BenchError> {
        let (addr, key) = {
            let ep = Endpoint::get(ctx, &self.options)?;
            (ep.tcp, ep.key.clone())
        };
        let hello = Hello::new(Mode::Connect, 0).encode(key.as_ref());
        let cancel = ctx.cancel_token().clone();
        let samples = ctx.measure_rate(|n| {
            for i in 0..n {
                if i % 64 == 0 {
                    cancel.check()?;
                }
                one_connection(addr, &hello)?;
            }
            Ok(n as f64)
        })?;
        Ok(vec![metric(
            "rate",
            Unit::OpsPerSec,
            Better::Higher,
            samples,
        )?])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_counts_follow_profile() {
        assert_eq!(stream_counts(Profile::Tiny, None), vec![1]);
        assert_eq!(stream_counts(Profile::Quick, None), vec![1, 2]);
        assert_eq!(stream_counts(Profile::Standard, None), vec![1, 2, 4]);
        assert_eq!(stream_counts(Profile::Full, None), vec![1, 2, 4, 8]);
        assert_eq!(stream_counts(Profile::Quick, Some(8)), vec![1, 8]);
        assert_eq!(stream_counts(Profile::Quick, Some(1)), vec![1]);
        // A --streams given is measured in tiny too.
        assert_eq!(stream_counts(Profile::Tiny, Some(3)), vec![1, 3]);
        assert_eq!(stream_counts(Profile::Tiny, Some(1)), vec![1]);
    }
}
