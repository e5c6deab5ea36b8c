//! A small table type rendered as aligned text, Markdown or CSV. Written
//! here rather than taken from a table crate because the three renderings
//! must agree cell for cell, and text output must stay plain (stdout is
//! data: no box-drawing characters to strip).

use unicode_width::UnicodeWidthStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Text,
    Markdown,
    Csv,
    /// An HTML `<table>` (cells escaped; right-aligned cells get class `num`).
    Html,
}

#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers; `aligns` per column.
    pub fn new(headers: &[(&str, Align)]) -> Table {
        Table {
            headers: headers.iter().map(|(h, _)| h.to_string()).collect(),
            aligns: headers.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// A table whose columns are written as one spec: the headers separated
    /// by commas, each left-aligned unless it starts with `>` (numbers), so
    /// a report's layout reads as one line: `"family, machine, >cases"`.
    pub fn columns(spec: &str) -> Table {
        let headers: Vec<(&str, Align)> = spec
            .split(',')
            .map(str::trim)
            .map(|h| match h.strip_prefix('>') {
                Some(right) => (right.trim_start(), Align::Right),
                None => (h, Align::Left),
            })
            .collect();
        Table::new(&headers)
    }

    /// Append a row; missing cells are blank, extra cells are dropped.
    pub fn push(&mut self, row: Vec<String>) {
        let mut row = row;
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// Append a row for a case with no value: its leading cells, a `-` where
    /// the value would be, blanks, and `note` in the last column.
    pub fn push_note(&mut self, lead: Vec<String>, note: String) {
        let mut row = lead;
        row.push("-".into());
        row.resize(self.headers.len().saturating_sub(1), String::new());
        row.push(note);
        self.push(row);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn render(&self, format: TableFormat) -> String {
        match format {
            TableFormat::Text => self.text(),
            TableFormat::Markdown => self.markdown(),
            TableFormat::Csv => self.csv(),
            TableFormat::Html => self.html(),
        }
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.width()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.width());
            }
        }
        w
    }

    fn pad(cell: &str, width: usize, align: Align) -> String {
        let fill = " ".repeat(width.saturating_sub(cell.width()));
        match align {
            Align::Left => format!("{cell}{fill}"),
            Align::Right => format!("{fill}{cell}"),
        }
    }

    fn text(&self) -> String {
        let w = self.widths();
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| Self::pad(c, w[i], self.aligns[i]))
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&self.headers);
        out.push('\n');
        let rule: Vec<String> = w.iter().map(|n| "-".repeat(*n)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }

    fn markdown(&self) -> String {
        let esc = markdown_text;
        let mut out = format!(
            "| {} |\n",
            self.headers
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let rule: Vec<&str> = self
            .aligns
            .iter()
            .map(|a| match a {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for r in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        out
    }

    fn html(&self) -> String {
        let esc = crate::html::esc;
        let mut out = String::from("<table>\n<tr>");
        for h in &self.headers {
            out.push_str(&format!("<th>{}</th>", esc(h)));
        }
        out.push_str("</tr>\n");
        for r in &self.rows {
            out.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                match self.aligns[i] {
                    Align::Right => out.push_str(&format!("<td class=\"num\">{}</td>", esc(c))),
                    Align::Left => out.push_str(&format!("<td>{}</td>", esc(c))),
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        out
    }

    fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        // Writing into a Vec cannot fail.
        let _ = w.write_record(&self.headers);
        for r in &self.rows {
            let _ = w.write_record(r);
        }
        let bytes = w.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }
}

/// Text from records as Markdown shows it, in a table cell or a line: a
/// label such as `<b>x</b>` must not become HTML where the Markdown is
/// rendered, nor a `|` end a cell, nor a newline a line.
pub fn markdown_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Table {
        let mut t = Table::columns("name, >value");
        t.push(vec!["a|b".into(), "1".into()]);
        t.push(vec!["long name, with comma".into(), "22.5".into()]);
        t
    }

    #[test]
    fn column_spec_names_and_aligns() {
        let t = Table::columns(" benchmark,>MB/s , > 95% interval");
        assert_eq!(t.headers, ["benchmark", "MB/s", "95% interval"]);
        assert_eq!(t.aligns, [Align::Left, Align::Right, Align::Right]);
    }

    #[test]
    fn text_aligned() {
        let s = t().render(TableFormat::Text);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "name                   value");
        assert_eq!(lines[1], "---------------------  -----");
        assert_eq!(lines[2], "a|b                        1");
        assert_eq!(lines[3], "long name, with comma   22.5");
    }

    #[test]
    fn markdown_escapes() {
        let s = t().render(TableFormat::Markdown);
        assert!(s.starts_with("| name | value |\n|---|---:|\n| a\\|b | 1 |\n"));
        let mut html = Table::columns("label");
        html.push(vec!["<b>x</b>&\"".into()]);
        assert!(html
            .render(TableFormat::Markdown)
            .contains("| &lt;b&gt;x&lt;/b&gt;&amp;\" |"));
    }

    #[test]
    fn html_escapes_and_aligns() {
        let s = t().render(TableFormat::Html);
        assert!(s.starts_with("<table>\n<tr><th>name</th><th>value</th></tr>\n"));
        assert!(s.contains("<tr><td>a|b</td><td class=\"num\">1</td></tr>"));
    }

    #[test]
    fn csv_quotes() {
        let s = t().render(TableFormat::Csv);
        assert_eq!(s, "name,value\na|b,1\n\"long name, with comma\",22.5\n");
    }
}
