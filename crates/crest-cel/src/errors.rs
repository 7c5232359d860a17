//! Compile-time issues (parse and check errors) rendered exactly as cel-go renders them:
//!
//! ```text
//! ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(int, bool)'
//!  | self == true
//!  | .....^
//! ```

use std::fmt;
use std::sync::Arc;

use crate::ast::SourceInfo;

/// One error at a code-point offset of the source.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    pub offset: Option<usize>,
    pub message: String,
}

/// The errors of one compilation, with the source to locate them in.
#[derive(Debug, Clone)]
pub struct Issues {
    pub issues: Vec<Issue>,
    pub source: Arc<SourceInfo>,
    /// Source name in messages; cel-go uses `<input>`.
    pub description: String,
}

impl Issues {
    pub fn new(source: Arc<SourceInfo>) -> Issues {
        Issues {
            issues: Vec::new(),
            source,
            description: "<input>".to_string(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.issues.is_empty()
    }

    /// `ERROR: <input>:L:C: message` of one issue, without the snippet.
    pub fn headline(&self, issue: &Issue) -> String {
        match issue.offset {
            Some(off) => {
                let (line, col) = self.source.location(off);
                format!(
                    "ERROR: {}:{}:{}: {}",
                    self.description,
                    line,
                    col + 1,
                    issue.message
                )
            }
            None => format!("ERROR: {}:-1:0: {}", self.description, issue.message),
        }
    }

    fn render(&self, issue: &Issue) -> String {
        let mut out = self.headline(issue);
        let Some(off) = issue.offset else {
            return out;
        };
        let (line, col) = self.source.location(off);
        if let Some(text) = self.source.line_text(line) {
            let text = text.replace('\t', " ");
            out.push_str("\n | ");
            out.push_str(&text);
            out.push_str("\n | ");
            // cel-go marks wide (multi-byte) characters with full-width dots and caret.
            let chars: Vec<char> = text.chars().collect();
            for c in chars.iter().take(col) {
                out.push(if c.len_utf8() > 1 { '\u{FF0E}' } else { '.' });
            }
            match chars.get(col) {
                Some(c) if c.len_utf8() > 1 => out.push('\u{FF3E}'),
                _ => out.push('^'),
            }
        }
        out
    }
}

impl fmt::Display for Issues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // cel-go sorts by location and joins with "\n".
        let mut sorted: Vec<&Issue> = self.issues.iter().collect();
        sorted.sort_by_key(|i| i.offset.unwrap_or(0));
        let parts: Vec<String> = sorted.iter().map(|i| self.render(i)).collect();
        f.write_str(&parts.join("\n"))
    }
}

impl std::error::Error for Issues {}
