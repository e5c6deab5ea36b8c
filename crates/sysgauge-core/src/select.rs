//! One grammar for every `--only` and `--skip`, whatever the command.
//!
//! An entry is a family name (`hash`), a full benchmark id (`hash.md5`), or
//! an id without its family (`md5`), which names that benchmark in every
//! family the command runs. `run`, `mem`, `crypto`, `cpu` and `disk` once
//! had four grammars; one type here means the command line, the error
//! messages and the docs cannot drift apart again.

use crate::bench::Benchmark;
use crate::record::family_of;
use std::fmt;
use std::str::FromStr;

/// One entry of a `--only`/`--skip` list (clap splits the list on commas).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selector(String);

/// Why an entry is not a selector, or why a selection fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error("an entry is empty (a doubled or trailing comma?)")]
    Empty,
    #[error(
        "'{0}' is not a family or benchmark name (lowercase letters, digits, '-', '_' and '.')"
    )]
    Malformed(String),
    #[error("{option}: unknown family or benchmark '{entry}' (known here: {known}; `sysgauge list` shows every id)")]
    Unknown {
        option: &'static str,
        entry: String,
        known: String,
    },
    #[error("--only: '{entry}' names {id}, which measures nothing itself: it is computed from {inputs} of the same run, which the selection leaves out; select them instead (it comes with them)")]
    DerivedWithoutInputs {
        entry: String,
        id: String,
        inputs: String,
    },
}

impl FromStr for Selector {
    type Err = SelectError;

    fn from_str(s: &str) -> Result<Selector, SelectError> {
        let s = s.trim().to_ascii_lowercase();
        if s.is_empty() {
            return Err(SelectError::Empty);
        }
        let well_formed = s.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        });
        if !well_formed {
            return Err(SelectError::Malformed(s));
        }
        Ok(Selector(s))
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Selector {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this entry names `id`: its family, the id, or the id
    /// without its family.
    pub fn matches(&self, id: &str) -> bool {
        let e = self.0.as_str();
        e == id
            || e == family_of(id)
            || (!e.contains('.') && id.split_once('.').is_some_and(|(_, rest)| rest == e))
    }
}

/// Whether any of `list` names `id`.
pub fn any_matches(list: &[Selector], id: &str) -> bool {
    list.iter().any(|s| s.matches(id))
}

/// Apply `--only` and `--skip` to `all`.
///
/// Without `--only`, what `by_default` accepts is kept (`run` leaves its
/// opt-in families out). A derived benchmark (an index) goes with its
/// inputs: kept when every benchmark it is computed from is kept, dropped
/// when any of them is (it could not be computed). An entry that names nothing in `all` is an
/// error listing what the command knows, so a typo never runs the wrong
/// set silently.
pub fn select(
    all: Vec<Box<dyn Benchmark>>,
    only: &[Selector],
    skip: &[Selector],
    by_default: impl Fn(&dyn Benchmark) -> bool,
) -> Result<Vec<Box<dyn Benchmark>>, SelectError> {
    for (option, list) in [("--only", only), ("--skip", skip)] {
        if let Some(unknown) = list.iter().find(|s| !all.iter().any(|b| s.matches(b.id()))) {
            return Err(SelectError::Unknown {
                option,
                entry: unknown.to_string(),
                known: known_names(&all),
            });
        }
    }
    let chosen = |b: &dyn Benchmark| {
        if only.is_empty() {
            by_default(b)
        } else {
            any_matches(only, b.id())
        }
    };
    let measured: Vec<String> = all
        .iter()
        .filter(|b| b.derived_from().is_empty() && chosen(b.as_ref()))
        .filter(|b| !any_matches(skip, b.id()))
        .map(|b| b.id().to_string())
        .collect();
    let kept = |b: &dyn Benchmark| {
        let inputs = b.derived_from();
        if inputs.is_empty() {
            return measured.iter().any(|m| m == b.id());
        }
        inputs.iter().all(|i| measured.contains(i))
            && !any_matches(skip, b.id())
            && (!only.is_empty() || by_default(b))
    };
    // An entry that names only derived benchmarks (`--only index-integer`)
    // asks for something that cannot be computed without its inputs: say
    // so, rather than silently run without it (or run nothing).
    for entry in only {
        let named: Vec<&dyn Benchmark> = all
            .iter()
            .map(|b| b.as_ref())
            .filter(|b| entry.matches(b.id()))
            .collect();
        if named.iter().all(|b| !b.derived_from().is_empty()) {
            if let Some(b) = named
                .iter()
                .find(|b| !kept(**b) && !any_matches(skip, b.id()))
            {
                return Err(SelectError::DerivedWithoutInputs {
                    entry: entry.to_string(),
                    id: b.id().to_string(),
                    inputs: b.derived_from().join(", "),
                });
            }
        }
    }
    Ok(all.into_iter().filter(|b| kept(b.as_ref())).collect())
}

/// What a command can select, for an error message: the families, and the
/// short names when the command runs one family.
fn known_names(all: &[Box<dyn Benchmark>]) -> String {
    let mut families: Vec<&str> = all.iter().map(|b| family_of(b.id())).collect();
    families.dedup();
    if families.len() == 1 {
        let short: Vec<&str> = all
            .iter()
            .filter_map(|b| b.id().split_once('.').map(|(_, rest)| rest))
            .collect();
        format!("{}, or {}", families[0], short.join(", "))
    } else {
        families.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{Description, Plan};
    use crate::ctx::RunCtx;
    use crate::record::{Metric, Params};
    use crate::unit::{Better, Unit};
    use crate::BenchError;

    struct Fake {
        id: &'static str,
        inputs: &'static [&'static str],
    }

    impl Benchmark for Fake {
        fn id(&self) -> &str {
            self.id
        }
        fn describe(&self) -> Description {
            Description::new("fake", Unit::Count, Better::Higher)
        }
        fn cases(&self, _: &Plan) -> Vec<Params> {
            vec![Params::new()]
        }
        fn run(&self, _: &mut RunCtx, _: &Params) -> Result<Vec<Metric>, BenchError> {
            Ok(Vec::new())
        }
        fn derived_from(&self) -> Vec<String> {
            self.inputs.iter().map(|s| s.to_string()).collect()
        }
    }

    fn all() -> Vec<Box<dyn Benchmark>> {
        let b = |id, inputs| Box::new(Fake { id, inputs }) as Box<dyn Benchmark>;
        vec![
            b("alpha.one", &[]),
            b("alpha.two", &[]),
            b("alpha.index", &["alpha.one", "alpha.two"]),
            b("beta.one", &[]),
            b("beta.three", &[]),
            b("omega.slow", &[]),
        ]
    }

    fn sel(list: &str) -> Vec<Selector> {
        list.split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect()
    }

    fn ids(only: &str, skip: &str) -> Vec<String> {
        select(all(), &sel(only), &sel(skip), |b| {
            !b.id().starts_with("omega.")
        })
        .unwrap()
        .iter()
        .map(|b| b.id().to_string())
        .collect()
    }

    #[test]
    fn grammar() {
        assert_eq!(
            "  Hash.MD5 ".parse::<Selector>().unwrap().as_str(),
            "hash.md5"
        );
        assert_eq!("".parse::<Selector>(), Err(SelectError::Empty));
        assert!(matches!(
            "a b".parse::<Selector>(),
            Err(SelectError::Malformed(_))
        ));
        assert!(matches!(
            "a..b".parse::<Selector>(),
            Err(SelectError::Malformed(_))
        ));
        assert!(matches!(
            "a.".parse::<Selector>(),
            Err(SelectError::Malformed(_))
        ));
    }

    #[test]
    fn families_ids_and_short_names() {
        assert_eq!(
            ids("", ""),
            [
                "alpha.one",
                "alpha.two",
                "alpha.index",
                "beta.one",
                "beta.three"
            ]
        );
        assert_eq!(ids("beta", ""), ["beta.one", "beta.three"]);
        assert_eq!(ids("omega", ""), ["omega.slow"]);
        // A short name names that benchmark in every family.
        assert_eq!(ids("one", ""), ["alpha.one", "beta.one"]);
        assert_eq!(ids("beta.one,three", ""), ["beta.one", "beta.three"]);
        assert_eq!(ids("", "alpha,three"), ["beta.one"]);
    }

    #[test]
    fn derived_benchmarks_follow_their_inputs() {
        assert_eq!(ids("alpha.one", ""), ["alpha.one"]);
        assert_eq!(
            ids("alpha.one,two", ""),
            ["alpha.one", "alpha.two", "alpha.index"]
        );
        assert_eq!(ids("alpha", "alpha.two"), ["alpha.one"]);
        assert_eq!(ids("alpha", "index"), ["alpha.one", "alpha.two"]);
        assert_eq!(
            ids("alpha.one,two,index", ""),
            ["alpha.one", "alpha.two", "alpha.index"]
        );
        // Named alone, a derived benchmark is explained, not dropped.
        for only in ["index", "alpha.index", "alpha.one,index"] {
            let e = select(all(), &sel(only), &[], |_| true).err();
            assert_eq!(
                e,
                Some(SelectError::DerivedWithoutInputs {
                    entry: if only.contains("alpha.index") {
                        "alpha.index"
                    } else {
                        "index"
                    }
                    .into(),
                    id: "alpha.index".into(),
                    inputs: "alpha.one, alpha.two".into(),
                }),
                "{only}"
            );
        }
    }

    #[test]
    fn unknown_entries_name_what_is_known() {
        let e = select(all(), &sel("gamma"), &[], |_| true).err().unwrap();
        let msg = e.to_string();
        assert!(
            msg.contains("--only: unknown family or benchmark 'gamma'"),
            "{msg}"
        );
        assert!(msg.contains("alpha, beta, omega"), "{msg}");
        let one: Vec<Box<dyn Benchmark>> = all()
            .into_iter()
            .filter(|b| b.id().starts_with("beta."))
            .collect();
        let msg = select(one, &[], &sel("alpha.one"), |_| true)
            .err()
            .unwrap()
            .to_string();
        assert!(
            msg.contains("--skip: unknown family or benchmark 'alpha.one'"),
            "{msg}"
        );
        assert!(msg.contains("beta, or one, three"), "{msg}");
    }
}
