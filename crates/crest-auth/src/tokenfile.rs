//! Static tokens: kube-apiserver's `--token-auth-file` (k8s.io/apiserver
//! `authentication/token/tokenfile`): a CSV of `token,user,uid[,"group1,group2"]`, read with Go's
//! `encoding/csv` (quoted fields, `""` escapes, blank lines skipped, variable field counts)
//! and its error messages.

use crest_api::UserInfo;
use std::collections::HashMap;

/// The users of a token file, by token.
#[derive(Clone, Debug, Default)]
pub struct TokenFile {
    tokens: HashMap<String, UserInfo>,
    /// What kube-apiserver logs as warnings while reading (empty and duplicate tokens).
    pub warnings: Vec<String>,
}

impl TokenFile {
    /// Reads the CSV `text` of the file at `path` (the path appears in messages, as upstream's).
    pub fn parse(text: &str, path: &str) -> Result<TokenFile, String> {
        let records = read_csv(text)?;
        let mut file = TokenFile::default();
        for (record_num, record) in records.into_iter().enumerate() {
            let record_num = record_num + 1;
            if record.len() < 3 {
                return Err(format!(
                    "token file '{path}' must have at least 3 columns (token, user name, user uid), found {}",
                    record.len()
                ));
            }
            if record[0].is_empty() {
                file.warnings.push(format!(
                    "empty token has been found in token file '{path}', record number '{record_num}'"
                ));
                continue;
            }
            let mut user = UserInfo {
                name: record[1].clone(),
                uid: record[2].clone(),
                ..UserInfo::default()
            };
            if record.len() >= 4 {
                user.groups = record[3].split(',').map(str::to_string).collect();
            }
            if file.tokens.contains_key(&record[0]) {
                file.warnings.push(format!(
                    "duplicate token has been found in token file '{path}', record number '{record_num}'"
                ));
            }
            file.tokens.insert(record[0].clone(), user);
        }
        Ok(file)
    }

    /// Adds a token (e.g. the admin's bearer token of a `--plain-http` kubeconfig).
    pub fn insert(&mut self, token: impl Into<String>, user: UserInfo) {
        self.tokens.insert(token.into(), user);
    }

    /// The user of `token` (without `system:authenticated`; see
    /// [`crate::with_authenticated_group`]).
    pub fn lookup(&self, token: &str) -> Option<&UserInfo> {
        self.tokens.get(token)
    }

    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether there is no token.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

/// A new random bearer token: 32 bytes of **OS entropy**, base64url without padding.
pub fn random_token() -> Result<String, String> {
    use base64::Engine;
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|e| format!("cannot draw a token: {e}"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

const ERR_BARE_QUOTE: &str = "bare \" in non-quoted-field";
const ERR_QUOTE: &str = "extraneous or missing \" in quoted-field";

fn parse_error(start_line: usize, line: usize, col: usize, err: &str) -> String {
    if start_line != line {
        format!("record on line {start_line}; parse error on line {line}, column {col}: {err}")
    } else {
        format!("parse error on line {line}, column {col}: {err}")
    }
}

/// Go's `encoding/csv` reader with `FieldsPerRecord = -1` (comma `,`, no comments, no lazy
/// quotes); columns in errors are 1-based byte indexes as Go ≥ 1.17 reports them.
fn read_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    // Lines with their endings normalised as Go's readLine: `\r\n` -> `\n`, a trailing `\r`
    // before EOF dropped.
    let mut lines: Vec<String> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (line, next) = match rest.find('\n') {
            Some(i) => (&rest[..=i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let mut l = line.to_string();
        if l.ends_with("\r\n") {
            l.truncate(l.len() - 2);
            l.push('\n');
        } else if next.is_empty() && !l.ends_with('\n') && l.ends_with('\r') {
            l.pop();
        }
        lines.push(l);
        rest = next;
    }

    let mut records = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        i += 1;
        if line == "\n" || line.is_empty() {
            continue; // blank line (or a lone `\r` before EOF)
        }
        let rec_line = i;
        let mut num_line = i;
        let mut fields: Vec<String> = Vec::new();
        let mut line: &str = line.as_str();
        let mut line_buf;
        let mut col = 1usize;
        'fields: loop {
            if !line.starts_with('"') {
                // Unquoted field.
                let end = line.find(',');
                let field = match end {
                    Some(e) => &line[..e],
                    None => line.strip_suffix('\n').unwrap_or(line),
                };
                if let Some(j) = field.find('"') {
                    return Err(parse_error(rec_line, num_line, col + j, ERR_BARE_QUOTE));
                }
                fields.push(field.to_string());
                match end {
                    Some(e) => {
                        col += e + 1;
                        line = &line[e + 1..];
                        continue 'fields;
                    }
                    None => break 'fields,
                }
            }
            // Quoted field.
            let mut field = String::new();
            line = &line[1..];
            col += 1;
            loop {
                if let Some(q) = line.find('"') {
                    field.push_str(&line[..q]);
                    line = &line[q + 1..];
                    col += q + 1;
                    if line.starts_with('"') {
                        field.push('"');
                        line = &line[1..];
                        col += 1;
                    } else if line.starts_with(',') {
                        line = &line[1..];
                        col += 1;
                        fields.push(field);
                        continue 'fields;
                    } else if line.is_empty() || line == "\n" {
                        fields.push(field);
                        break 'fields;
                    } else {
                        return Err(parse_error(rec_line, num_line, col - 1, ERR_QUOTE));
                    }
                } else if !line.is_empty() {
                    // The field goes on past the end of the line.
                    field.push_str(line);
                    col += line.len();
                    if i < lines.len() {
                        line_buf = lines[i].clone();
                        i += 1;
                        num_line += 1;
                        col = 1;
                        line = line_buf.as_str();
                    } else {
                        line = "";
                    }
                } else {
                    // Abrupt end of file.
                    return Err(parse_error(rec_line, num_line, col, ERR_QUOTE));
                }
            }
        }
        records.push(fields);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_users_and_groups() {
        let f = TokenFile::parse(
            "abc,alice,1001,\"dev,system:masters\"\n\ndef,bob,1002\r\nghi,carol,1003,solo\n",
            "/t.csv",
        )
        .unwrap();
        let alice = f.lookup("abc").unwrap();
        assert_eq!(alice.name, "alice");
        assert_eq!(alice.uid, "1001");
        assert_eq!(alice.groups, vec!["dev", "system:masters"]);
        assert!(f.lookup("def").unwrap().groups.is_empty());
        assert_eq!(f.lookup("ghi").unwrap().groups, vec!["solo"]);
        assert!(f.lookup("nope").is_none());
        assert_eq!(f.len(), 3);
        assert!(f.warnings.is_empty());
    }

    #[test]
    fn inserted_and_random_tokens() {
        let mut f = TokenFile::default();
        let t = random_token().unwrap();
        assert_eq!(t.len(), 43);
        assert_ne!(t, random_token().unwrap());
        f.insert(
            t.clone(),
            UserInfo {
                name: "crest-admin".into(),
                groups: vec!["system:masters".into()],
                ..UserInfo::default()
            },
        );
        assert_eq!(f.lookup(&t).unwrap().groups, vec!["system:masters"]);
    }

    #[test]
    fn too_few_columns() {
        assert_eq!(
            TokenFile::parse("abc,alice\n", "/t.csv").unwrap_err(),
            "token file '/t.csv' must have at least 3 columns (token, user name, user uid), found 2"
        );
    }

    #[test]
    fn warnings_for_empty_and_duplicate_tokens() {
        let f = TokenFile::parse(",x,1\nabc,a,2\nabc,b,3\n", "/t.csv").unwrap();
        assert_eq!(
            f.warnings,
            vec![
                "empty token has been found in token file '/t.csv', record number '1'",
                "duplicate token has been found in token file '/t.csv', record number '3'"
            ]
        );
        // The later record wins, as a Go map assignment.
        assert_eq!(f.lookup("abc").unwrap().name, "b");
    }

    #[test]
    fn csv_quoting_and_errors_as_go() {
        assert_eq!(TokenFile::parse("a,b,c\r\n\r", "/t").unwrap().len(), 1);
        let f = TokenFile::parse("\"a\"\"b\",\"multi\nline\",u\n", "/t").unwrap();
        assert_eq!(f.lookup("a\"b").unwrap().name, "multi\nline");
        assert_eq!(
            TokenFile::parse("a\"b,c,d\n", "/t").unwrap_err(),
            "parse error on line 1, column 2: bare \" in non-quoted-field"
        );
        assert_eq!(
            TokenFile::parse("\"a \"word\",b,c\n", "/t").unwrap_err(),
            "parse error on line 1, column 4: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            TokenFile::parse("x,y,z\n\"abc", "/t").unwrap_err(),
            "parse error on line 2, column 5: extraneous or missing \" in quoted-field"
        );
        assert_eq!(
            TokenFile::parse("\"a\nb", "/t").unwrap_err(),
            "record on line 1; parse error on line 2, column 2: extraneous or missing \" in quoted-field"
        );
    }
}
