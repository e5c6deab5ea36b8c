//! `StoreSink`: the runner's events written to the database as they happen:
//! the run header first, then each finished result in its own transaction,
//! then the run's end state.

use crate::Store;
use sysgauge_core::record::{ResultRecord, RunRecord};
use sysgauge_core::runner::{Sink, SinkError};

pub struct StoreSink<'a> {
    store: &'a mut Store,
    run_row: Option<i64>,
    source: String,
}

impl<'a> StoreSink<'a> {
    pub fn new(store: &'a mut Store) -> StoreSink<'a> {
        StoreSink {
            store,
            run_row: None,
            source: "local".to_string(),
        }
    }

    /// Row id of the run once started (what `results show` takes).
    pub fn run_row(&self) -> Option<i64> {
        self.run_row
    }
}

impl Sink for StoreSink<'_> {
    fn run_started(&mut self, run: &RunRecord) -> Result<(), SinkError> {
        self.run_row = Some(self.store.begin_run(run, &self.source)?);
        Ok(())
    }

    fn case_finished(
        &mut self,
        index: usize,
        _total: usize,
        r: &ResultRecord,
    ) -> Result<(), SinkError> {
        let row = self.run_row.ok_or("result before the run started")?;
        self.store.add_result(row, index, r)?;
        Ok(())
    }

    fn run_finished(&mut self, run: &RunRecord) -> Result<(), SinkError> {
        let row = self.run_row.ok_or("run finished before it started")?;
        self.store.finish_run(row, run)?;
        Ok(())
    }
}
