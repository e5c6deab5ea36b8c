//! `crypto --vs-openssl`: the system `openssl speed -mr -elapsed` run for
//! each case right after sysgauge measured it (a sink of the run), so both
//! see the same machine state even when the load changes during the run.
//! With `--rounds N` it runs after every round of every case, and each
//! row's ratio is the median of the rounds' ratios (interleaved rounds, the
//! median of the ratios: what docs/performance.md's tables use).
//! Its output becomes records through the `openssl speed` importer (same
//! ids, params and metrics) for the side-by-side table; they are shown, not
//! stored: the run holds what sysgauge measured.

use super::reference::{run_reference, ReferenceError, ReferencePlan};
use super::report::{below_openssl, vs_openssl_table, vs_rows, vs_rows_by_round, VsRow};
use crate::openssl_speed::{parse_mr, to_results};
use sysgauge_core::record::{Finding, ResultRecord, RunRecord, Status};
use sysgauge_core::rounds::ROUNDS;
use sysgauge_core::runner::{Sink, SinkError};
use sysgauge_core::{CancelToken, Profile};
use sysgauge_report::TableFormat;

/// Seconds per `openssl speed` measurement for a profile.
pub fn openssl_seconds(profile: Profile) -> u32 {
    match profile {
        Profile::Tiny | Profile::Quick => 1,
        Profile::Standard | Profile::Full => 3,
    }
}

/// One `openssl speed` invocation (its arguments) and its output, or why
/// it gave none.
pub type OpensslOutput = (String, Result<String, String>);

/// OpenSSL's numbers as records (with the workload version of each id
/// given), and a line per invocation that produced none (the legacy
/// provider missing, an unknown algorithm).
pub fn openssl_records<'o>(
    outputs: impl IntoIterator<Item = &'o OpensslOutput>,
    workload_version: &dyn Fn(&str) -> Option<u32>,
) -> (Vec<ResultRecord>, Vec<String>) {
    let mut records = Vec::new();
    let mut notes = Vec::new();
    for (what, out) in outputs {
        match out {
            Ok(text) => match parse_mr(text) {
                Ok(report) => records.extend(to_results(&report, workload_version)),
                Err(e) => notes.push(format!("openssl {what}: unreadable output ({e})")),
            },
            Err(e) => notes.push(format!("openssl {what}: {e}")),
        }
    }
    (records, notes)
}

/// A sink that runs `openssl speed` for each crypto or hash case as soon as
/// sysgauge finished it, and keeps the output.
pub struct OpensslAlongside<'a> {
    seconds: u32,
    announce: &'a dyn Fn(&str),
    cancel: &'a CancelToken,
    /// Each invocation's output, with the round of sysgauge's case it ran
    /// after (1 without `--rounds`).
    outputs: Vec<(u32, OpensslOutput)>,
    /// sysgauge's finished cases, for the closing finding.
    ours: Vec<ResultRecord>,
    missing: bool,
    /// Ctrl-C stopped OpenSSL before the run's last case.
    pub interrupted: bool,
}

impl<'a> OpensslAlongside<'a> {
    /// `announce` is told each `openssl` command line before it runs.
    pub fn new(seconds: u32, cancel: &'a CancelToken, announce: &'a dyn Fn(&str)) -> Self {
        OpensslAlongside {
            seconds,
            announce,
            cancel,
            outputs: Vec::new(),
            ours: Vec::new(),
            missing: false,
            interrupted: false,
        }
    }

    /// How many rounds OpenSSL ran after (1 without `--rounds`).
    fn rounds(&self) -> u32 {
        self.outputs.iter().map(|o| o.0).max().unwrap_or(1)
    }

    /// sysgauge's results `ours` beside OpenSSL's, and a line per OpenSSL
    /// invocation that produced nothing.
    fn rows(&self, ours: &[ResultRecord]) -> (Vec<VsRow>, Vec<String>) {
        // The versions of the cases sysgauge just ran (today's benchmarks).
        let version = |id: &str| {
            ours.iter()
                .find(|r| r.bench_id == id)
                .map(|r| r.workload_version)
        };
        let rounds = self.rounds();
        let mut notes: Vec<String> = Vec::new();
        let by_round: Vec<Vec<ResultRecord>> = (1..=rounds)
            .map(|round| {
                let outs = self.outputs.iter().filter(|o| o.0 == round);
                let (records, said) = openssl_records(outs.map(|o| &o.1), &version);
                for n in said {
                    if !notes.contains(&n) {
                        notes.push(n);
                    }
                }
                records
            })
            .collect();
        let rows = match by_round.as_slice() {
            [one] => vs_rows(ours, one),
            _ => vs_rows_by_round(ours, &by_round),
        };
        (rows, notes)
    }

    /// OpenSSL's run for `result`'s case, right after its round `round`.
    fn reference_after(&mut self, result: &ResultRecord, round: u32) {
        if self.missing || self.interrupted || !matches!(result.status, Status::Ok) {
            return;
        }
        let plan = ReferencePlan {
            bench_ids: vec![result.bench_id.clone()],
            block_sizes: result.params.get_u64("block_size").into_iter().collect(),
            threads: result
                .count_param("threads")
                .and_then(|t| usize::try_from(t).ok())
                .unwrap_or(1),
            seconds: self.seconds,
        };
        match run_reference(&plan, self.cancel, |inv| {
            (self.announce)(&format!("openssl {}", inv.args.join(" ")));
        }) {
            Ok(outs) => self.outputs.extend(outs.into_iter().map(|o| {
                (
                    round,
                    (
                        o.invocation.args.join(" "),
                        o.result.map_err(|e| e.to_string()),
                    ),
                )
            })),
            Err(ReferenceError::Missing) => self.missing = true,
            Err(ReferenceError::Cancelled) => self.interrupted = true,
            Err(e) => self
                .outputs
                .push((round, (result.bench_id.clone(), Err(e.to_string())))),
        }
    }

    /// The side-by-side table (or why there is none).
    pub fn table(&self, run: &RunRecord) -> String {
        let rounds = self.rounds();
        let mut text = if rounds > 1 {
            format!(
                "\nsysgauge and the system OpenSSL (`openssl speed -mr -elapsed`, run right after each of the {rounds} rounds of each case), ratio = the median of the rounds' sysgauge / openssl:\n"
            )
        } else {
            String::from(
                "\nsysgauge and the system OpenSSL (`openssl speed -mr -elapsed`, run right after each case), ratio = sysgauge / openssl:\n",
            )
        };
        if self.missing {
            text.push_str(
                "skipped: 'openssl' is not installed (Debian/Ubuntu: apt-get install openssl)\n",
            );
            return text;
        }
        let (rows, notes) = self.rows(&run.results);
        text.push_str(&vs_openssl_table(&rows, TableFormat::Text));
        for n in notes {
            text.push_str(&n);
            text.push('\n');
        }
        if self.interrupted {
            text.push_str("(interrupted: OpenSSL did not run for the remaining cases)\n");
        }
        text
    }
}

impl Sink for OpensslAlongside<'_> {
    fn closing_findings(&mut self) -> Vec<Finding> {
        below_openssl(&self.rows(&self.ours).0)
            .into_iter()
            .collect()
    }

    fn round_finished(
        &mut self,
        _index: usize,
        _total: usize,
        round: u32,
        _rounds: u32,
        result: &ResultRecord,
    ) {
        self.reference_after(result, round);
    }

    fn case_finished(
        &mut self,
        _index: usize,
        _total: usize,
        result: &ResultRecord,
    ) -> Result<(), SinkError> {
        if matches!(result.status, Status::Ok) && !self.missing && !self.interrupted {
            self.ours.push(result.clone());
        }
        // The last round's (merged with the others when there were several).
        let round = result
            .details
            .get_u64(ROUNDS)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(1);
        self.reference_after(result, round);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openssl_output_becomes_records() {
        let good = "+H:16:8192\n+F:22:aes-128-cbc:1000000.00:1500000000.00\n".to_string();
        let outputs = vec![
            ("-evp aes-128-cbc".to_string(), Ok(good)),
            (
                "-evp rc4".to_string(),
                Err("exited with 1: legacy provider".to_string()),
            ),
            ("-evp x".to_string(), Ok("not openssl output".to_string())),
        ];
        let (records, notes) = openssl_records(&outputs, &|_| None);
        assert_eq!(records.len(), 2, "{records:?}");
        assert_eq!(records[0].bench_id, "crypto.aes-128-cbc");
        assert_eq!(records[1].params.get_u64("block_size"), Some(8192));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("legacy provider"));
    }
}
