//! Reading the JSON documents other tools write (hyperfine's
//! `--export-json`, fio's `--output-format=json`) for `sysgauge import`.
//!
//! Their errors name a place a user can find: a syntax error its line and
//! column (a truncated file ends early), a field that is missing or of the
//! wrong kind its path (`results[1].times[3]`, `jobs[0] (seqread).read.iops`).
//! The text line is not known for a field: `serde_json::Value` keeps no
//! positions, and the path says more than a line of a pretty-printed
//! document would.
//!
//! fio writes notes to standard output before its JSON ("note: both
//! iodepth >= 1 and synchronous I/O engine are selected …") and, with
//! `--output-format=json,normal`, text around it, so the document is the
//! first JSON object that starts a line, read up to its end.

use serde::de::DeserializeOwned;
use serde_json::Value;
use sysgauge_compare::import::MAX_IMPORT_VALUE;

/// Why a JSON document of another tool cannot be imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonDocError {
    /// Not JSON, or cut short: where the reader stopped (1-based).
    #[error("line {line} column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON, but a field is missing or of the wrong kind.
    #[error("{field}: {message}")]
    Field { field: String, message: String },
}

/// The first JSON object starting a line of `text`, parsed.
pub fn parse_document(text: &str) -> Result<Value, JsonDocError> {
    parse_document_as(text)
}

/// The first JSON object starting a line of `text`, read as a `T`: a
/// tool's typed document, which holds a large export in a fraction of the
/// memory a [`Value`] tree takes. A field of the wrong kind is reported by
/// serde's line and column only; readers that name the field read the
/// document again as a [`Value`] to say which.
pub fn parse_document_as<T: DeserializeOwned>(text: &str) -> Result<T, JsonDocError> {
    let mut offset = 0;
    let mut skipped_lines = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            start = Some(offset + (line.len() - line.trim_start().len()));
            break;
        }
        offset += line.len();
        skipped_lines += 1;
    }
    let Some(start) = start else {
        return Err(JsonDocError::Syntax {
            line: skipped_lines.max(1),
            column: 1,
            message: "no JSON object (a line starting with '{')".to_string(),
        });
    };
    let body = &text[start..];
    let mut stream = serde_json::Deserializer::from_str(body).into_iter::<T>();
    match stream.next() {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => {
            let full = e.to_string();
            let message = match full.rfind(" at line ") {
                Some(k) => full[..k].to_string(),
                None => full,
            };
            let message = if e.is_eof() {
                format!("{message} (the document is cut short)")
            } else {
                message
            };
            // The object starts on line `skipped_lines + 1`; serde counts
            // from there, and its column is in that line only on line 1.
            let column = if e.line() <= 1 {
                e.column() + (start - offset)
            } else {
                e.column()
            };
            Err(JsonDocError::Syntax {
                line: skipped_lines + e.line().max(1),
                column,
                message,
            })
        }
        None => Err(JsonDocError::Syntax {
            line: skipped_lines + 1,
            column: 1,
            message: "no JSON object".to_string(),
        }),
    }
}

/// A value inside a document with the path that leads to it, so every
/// error names its field.
#[derive(Debug, Clone)]
pub struct At<'a> {
    pub value: &'a Value,
    path: String,
}

impl<'a> At<'a> {
    /// The document itself (its path is empty).
    pub fn root(value: &'a Value) -> At<'a> {
        At {
            value,
            path: String::new(),
        }
    }

    pub fn path(&self) -> &str {
        if self.path.is_empty() {
            "the document"
        } else {
            &self.path
        }
    }

    /// An error about this value.
    pub fn error(&self, message: impl Into<String>) -> JsonDocError {
        JsonDocError::Field {
            field: self.path().to_string(),
            message: message.into(),
        }
    }

    /// The same value, its path followed by ` (label)`: an array item
    /// named by what it holds (`jobs[0] (seqread)`).
    pub fn labelled(mut self, label: &str) -> At<'a> {
        self.path = format!("{} ({label})", self.path);
        self
    }

    fn child(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// `key` of this object, when present and not null.
    pub fn get(&self, key: &str) -> Option<At<'a>> {
        self.value
            .get(key)
            .filter(|v| !v.is_null())
            .map(|value| At {
                value,
                path: self.child(key),
            })
    }

    /// `key` of this object, which must be there.
    pub fn require(&self, key: &str) -> Result<At<'a>, JsonDocError> {
        if !self.value.is_object() {
            return Err(self.error("is not an object"));
        }
        self.get(key).ok_or_else(|| JsonDocError::Field {
            field: self.child(key),
            message: "missing".to_string(),
        })
    }

    /// The items of this array.
    pub fn items(&self) -> Result<Vec<At<'a>>, JsonDocError> {
        let array = self
            .value
            .as_array()
            .ok_or_else(|| self.error("is not an array"))?;
        Ok(array
            .iter()
            .enumerate()
            .map(|(i, value)| At {
                value,
                path: format!("{}[{i}]", self.path()),
            })
            .collect())
    }

    /// The entries of this object, in the document's order.
    pub fn entries(&self) -> Result<Vec<(&'a str, At<'a>)>, JsonDocError> {
        let object = self
            .value
            .as_object()
            .ok_or_else(|| self.error("is not an object"))?;
        Ok(object
            .iter()
            .map(|(k, value)| {
                (
                    k.as_str(),
                    At {
                        value,
                        path: self.child(k),
                    },
                )
            })
            .collect())
    }

    /// This value as text.
    pub fn text(&self) -> Result<&'a str, JsonDocError> {
        self.value
            .as_str()
            .ok_or_else(|| self.error(format!("{} is not a string", short(self.value))))
    }

    /// This value as a finite number that is not negative and not beyond
    /// what an import may hold (`MAX_IMPORT_VALUE`).
    pub fn number(&self) -> Result<f64, JsonDocError> {
        match self.value.as_f64() {
            Some(v) if v > MAX_IMPORT_VALUE => Err(self.error(format!(
                "{v:e} is beyond what sysgauge accepts ({MAX_IMPORT_VALUE:e})"
            ))),
            Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
            Some(v) => Err(self.error(format!("{v} is not a number of zero or more"))),
            None => Err(self.error(format!("{} is not a number", short(self.value)))),
        }
    }
}

/// A value as an error message shows it: at most 40 characters.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_before_the_object_are_skipped() {
        let v = parse_document("note: something\n{\n  \"a\" : 1\n}\ntrailing text\n").unwrap();
        assert_eq!(v["a"], 1);
    }

    #[test]
    fn syntax_errors_name_the_line_of_the_text() {
        let e = parse_document("note\n{\n  \"a\" : 1,\n  \"b\" : x\n}\n").unwrap_err();
        match e {
            JsonDocError::Syntax { line, message, .. } => {
                assert_eq!(line, 4);
                assert!(message.starts_with("expected value"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let cut = parse_document("{\n  \"a\" : [1,\n").unwrap_err();
        assert!(cut.to_string().contains("cut short"), "{cut}");
        let none = parse_document("hello\nworld\n").unwrap_err();
        assert!(none.to_string().contains("no JSON object"), "{none}");
    }

    #[test]
    fn fields_are_named_by_path() {
        let v: Value = serde_json::from_str(r#"{"jobs":[{"read":{"iops":"x"}}]}"#).unwrap();
        let root = At::root(&v);
        let job = root.require("jobs").unwrap().items().unwrap()[0]
            .clone()
            .labelled("seqread");
        let read = job.require("read").unwrap();
        let e = read.require("iops").unwrap().number().unwrap_err();
        assert_eq!(
            e.to_string(),
            "jobs[0] (seqread).read.iops: \"x\" is not a number"
        );
        let m = read.require("bw").unwrap_err();
        assert_eq!(m.to_string(), "jobs[0] (seqread).read.bw: missing");
        let top = root.require("results").unwrap_err();
        assert_eq!(top.to_string(), "results: missing");
        let huge: Value = serde_json::from_str(r#"{"t":1e300}"#).unwrap();
        let e = At::root(&huge).require("t").unwrap().number().unwrap_err();
        assert!(e.to_string().starts_with("t: 1e300 is beyond"), "{e}");
        let not_object = read.require("iops").unwrap().require("x").unwrap_err();
        assert!(
            not_object.to_string().contains("is not an object"),
            "{not_object}"
        );
    }
}
