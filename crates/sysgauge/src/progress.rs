//! Progress on stderr: a bar when stderr is a terminal, one plain line per
//! finished case otherwise (logs and CI).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use sysgauge_core::record::{Params, ResultRecord, RunRecord, Status};
use sysgauge_core::runner::{Sink, SinkError};
use sysgauge_report::{format_with_unit, status_note};

pub struct ConsoleProgress {
    bar: Option<ProgressBar>,
    quiet: bool,
}

impl ConsoleProgress {
    pub fn new(quiet: bool) -> ConsoleProgress {
        ConsoleProgress { bar: None, quiet }
    }

    /// `[i/total] PREFIXid params: what`, and the bar moved past the case.
    fn finished(&self, index: usize, total: usize, prefix: &str, r: &ResultRecord, what: &str) {
        self.line(&format!(
            "[{}/{}] {prefix}{}: {what}",
            index + 1,
            total,
            case_label(&r.bench_id, &r.params),
        ));
        if let Some(b) = &self.bar {
            b.set_position(index as u64 + 1);
        }
    }

    fn line(&self, text: &str) {
        let text = crate::style::paint(text, crate::style::Stream::Stderr);
        match &self.bar {
            Some(b) => b.println(text),
            None => eprintln!("{text}"),
        }
    }
}

fn case_label(id: &str, params: &Params) -> String {
    if params.is_empty() {
        id.to_string()
    } else {
        format!("{id} {params}")
    }
}

impl Sink for ConsoleProgress {
    fn case_started(&mut self, index: usize, total: usize, bench_id: &str, params: &Params) {
        if self.quiet {
            return;
        }
        if std::io::stderr().is_terminal() {
            let bar = self.bar.get_or_insert_with(|| {
                let b = ProgressBar::new(total as u64);
                let style = ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} {elapsed_precise} {wide_msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar());
                b.set_style(style);
                b
            });
            bar.set_position(index as u64);
            bar.set_message(case_label(bench_id, params));
        }
    }

    fn case_finished(
        &mut self,
        index: usize,
        total: usize,
        r: &ResultRecord,
    ) -> Result<(), SinkError> {
        if self.quiet {
            return Ok(());
        }
        let what = match (&r.status, r.primary(), sysgauge_core::rounds::spreads(r)) {
            (Status::Ok, Some(m), Some((between, within))) => format!(
                "{} ±{:.1}% within, ±{:.1}% between {} rounds",
                format_with_unit(m.value(), &m.unit),
                within * 100.0,
                between * 100.0,
                m.summary.n
            ),
            (Status::Ok, Some(m), None) => format!(
                "{} ±{:.1}%",
                format_with_unit(m.value(), &m.unit),
                m.summary.cov * 100.0
            ),
            (status, _, _) => status_note(status),
        };
        self.finished(index, total, "", r, &what);
        Ok(())
    }

    fn round_finished(
        &mut self,
        index: usize,
        total: usize,
        round: u32,
        rounds: u32,
        r: &ResultRecord,
    ) {
        if self.quiet {
            return;
        }
        let what = match (&r.status, r.primary()) {
            (Status::Ok, Some(m)) => format!(
                "{} ±{:.1}%",
                format_with_unit(m.value(), &m.unit),
                m.summary.cov * 100.0
            ),
            (status, _) => status_note(status),
        };
        self.finished(index, total, &format!("round {round}/{rounds} "), r, &what);
    }

    fn run_finished(&mut self, _run: &RunRecord) -> Result<(), SinkError> {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        Ok(())
    }
}
