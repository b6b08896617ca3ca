//! A JSON document kept as text, with the byte span of every value, so a
//! settings file is edited by splicing text into it rather than by parsing
//! and re-serializing it: everything `hookd install` does not touch keeps its
//! exact bytes (key order, indentation, number spelling, escapes, blank
//! lines, CRLF).
//!
//! The text is first validated with serde_json (which gives the line:column
//! of an error); the span parser below then only has to find boundaries.

use std::fmt::Write as _;

/// A byte range `start..end` of the document text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A value of the document, with its span.
#[derive(Debug)]
pub enum Node {
    /// `{…}`.
    Object {
        /// From `{` to `}` inclusive.
        span: Span,
        /// In document order.
        members: Vec<Member>,
    },
    /// `[…]`.
    Array {
        /// From `[` to `]` inclusive.
        span: Span,
        /// In document order.
        items: Vec<Node>,
    },
    /// A string, number, `true`, `false` or `null`.
    Scalar {
        /// The token.
        span: Span,
    },
}

/// One `"key": value` of an object.
#[derive(Debug)]
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// The key's span, quotes included.
    pub key_span: Span,
    /// The value.
    pub value: Node,
}

impl Member {
    /// From the key's opening quote to the end of the value.
    pub fn span(&self) -> Span {
        Span {
            start: self.key_span.start,
            end: self.value.span().end,
        }
    }
}

impl Node {
    /// The value's span.
    pub fn span(&self) -> Span {
        match self {
            Node::Object { span, .. } | Node::Array { span, .. } | Node::Scalar { span } => *span,
        }
    }

    /// The spans of the elements (members or items) of a container; empty
    /// for a scalar.
    pub fn element_spans(&self) -> Vec<Span> {
        match self {
            Node::Object { members, .. } => members.iter().map(Member::span).collect(),
            Node::Array { items, .. } => items.iter().map(Node::span).collect(),
            Node::Scalar { .. } => Vec::new(),
        }
    }

    /// The member named `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Member> {
        match self {
            Node::Object { members, .. } => members.iter().find(|m| m.key == key),
            _ => None,
        }
    }

    /// The items of an array (empty for anything else).
    pub fn items(&self) -> &[Node] {
        match self {
            Node::Array { items, .. } => items,
            _ => &[],
        }
    }
}

/// Where the text is not valid JSON, 1-based as an editor counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Line.
    pub line: usize,
    /// Column.
    pub column: usize,
    /// serde_json's description.
    pub message: String,
}

/// Validates `text` as one JSON value and returns its span tree.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        // serde_json appends " at line L column C" to its Display; keep the
        // bare description, the position is reported separately.
        let full = e.to_string();
        let message = match full.rfind(" at line ") {
            Some(cut) => full[..cut].to_string(),
            None => full,
        };
        return Err(SyntaxError {
            line: e.line(),
            column: e.column(),
            message,
        });
    }
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    parser.skip_ws();
    Ok(parser.value())
}

/// 1-based line and column of byte `pos`, columns counted in characters.
pub fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// A span parser for text serde_json has already accepted: it only finds
/// boundaries, so it never fails.
struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Node {
        let start = self.pos;
        match self.bytes.get(self.pos) {
            Some(b'{') => {
                self.pos += 1;
                let mut members = Vec::new();
                self.skip_ws();
                if self.bytes.get(self.pos) == Some(&b'}') {
                    self.pos += 1;
                } else {
                    loop {
                        self.skip_ws();
                        let key_span = self.string();
                        let key = serde_json::from_str(&self.text[key_span.start..key_span.end])
                            .unwrap_or_default();
                        self.skip_ws();
                        self.pos += 1; // ':'
                        self.skip_ws();
                        let value = self.value();
                        members.push(Member {
                            key,
                            key_span,
                            value,
                        });
                        self.skip_ws();
                        let sep = self.bytes.get(self.pos).copied();
                        self.pos += 1; // ',' or '}'
                        if sep != Some(b',') {
                            break;
                        }
                    }
                }
                Node::Object {
                    span: Span {
                        start,
                        end: self.pos,
                    },
                    members,
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.bytes.get(self.pos) == Some(&b']') {
                    self.pos += 1;
                } else {
                    loop {
                        self.skip_ws();
                        items.push(self.value());
                        self.skip_ws();
                        let sep = self.bytes.get(self.pos).copied();
                        self.pos += 1; // ',' or ']'
                        if sep != Some(b',') {
                            break;
                        }
                    }
                }
                Node::Array {
                    span: Span {
                        start,
                        end: self.pos,
                    },
                    items,
                }
            }
            Some(b'"') => Node::Scalar {
                span: self.string(),
            },
            _ => {
                while self
                    .bytes
                    .get(self.pos)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.'))
                {
                    self.pos += 1;
                }
                Node::Scalar {
                    span: Span {
                        start,
                        end: self.pos,
                    },
                }
            }
        }
    }

    /// A string token starting at `pos`, quotes included.
    fn string(&mut self) -> Span {
        let start = self.pos;
        self.pos += 1;
        while let Some(&b) = self.bytes.get(self.pos) {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'"' => break,
                _ => {}
            }
        }
        Span {
            start,
            end: self.pos,
        }
    }
}

/// A value to write, with its keys in the order given (serde_json's `Map`
/// would sort them).
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    /// An object.
    Object(Vec<(String, Out)>),
    /// An array.
    Array(Vec<Out>),
    /// A string.
    Str(String),
    /// A non-negative integer.
    Int(u64),
    /// A boolean.
    Bool(bool),
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

impl Out {
    /// Writes the value pretty-printed the way `JSON.stringify(v, null,
    /// unit)` and serde_json's pretty printer do: one element per line,
    /// nested lines indented by `unit` more than `indent`, the current line's
    /// indentation; `[]`/`{}` when empty.
    pub fn pretty(&self, indent: &str, style: &Style, out: &mut String) {
        let inner = format!("{indent}{}", style.unit);
        match self {
            Out::Object(members) if !members.is_empty() => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    out.push_str(if i == 0 { "" } else { "," });
                    let _ = write!(out, "{}{inner}{}: ", style.newline, quote(key));
                    value.pretty(&inner, style, out);
                }
                let _ = write!(out, "{}{indent}}}", style.newline);
            }
            Out::Array(items) if !items.is_empty() => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "" } else { "," });
                    let _ = write!(out, "{}{inner}", style.newline);
                    item.pretty(&inner, style, out);
                }
                let _ = write!(out, "{}{indent}]", style.newline);
            }
            _ => self.compact(out),
        }
    }

    /// Writes the value on one line, without spaces (serde_json's compact form).
    pub fn compact(&self, out: &mut String) {
        match self {
            Out::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    out.push_str(if i == 0 { "" } else { "," });
                    out.push_str(&quote(key));
                    out.push(':');
                    value.compact(out);
                }
                out.push('}');
            }
            Out::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "" } else { "," });
                    item.compact(out);
                }
                out.push(']');
            }
            Out::Str(s) => out.push_str(&quote(s)),
            Out::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Out::Bool(b) => {
                let _ = write!(out, "{b}");
            }
        }
    }

    /// The value as serde_json sees it (key order aside), for comparisons.
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            Out::Object(members) => serde_json::Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
            Out::Array(items) => {
                serde_json::Value::Array(items.iter().map(Out::to_value).collect())
            }
            Out::Str(s) => serde_json::Value::String(s.clone()),
            Out::Int(n) => serde_json::Value::from(*n),
            Out::Bool(b) => serde_json::Value::Bool(*b),
        }
    }
}

/// How a document is laid out, so inserted text looks like its neighbours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Style {
    /// One level of indentation: the leading whitespace of the first
    /// indented line (two spaces when there is none).
    pub unit: String,
    /// `"\r\n"` when the document uses it, else `"\n"`.
    pub newline: &'static str,
}

impl Style {
    /// Detects the style of `text`.
    pub fn detect(text: &str) -> Style {
        let unit = text
            .lines()
            .skip(1)
            .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
            .find(|ws| !ws.is_empty())
            .unwrap_or("  ")
            .to_string();
        Style {
            unit,
            newline: if text.contains("\r\n") { "\r\n" } else { "\n" },
        }
    }
}

/// One element to add to a container.
#[derive(Debug, Clone)]
pub enum Element {
    /// `"key": value`, for an object.
    Member(String, Out),
    /// A value, for an array.
    Item(Out),
}

impl Element {
    fn pretty(&self, indent: &str, style: &Style, out: &mut String) {
        if let Element::Member(key, _) = self {
            let _ = write!(out, "{}: ", quote(key));
        }
        self.value().pretty(indent, style, out);
    }

    fn compact(&self, out: &mut String) {
        if let Element::Member(key, _) = self {
            let _ = write!(out, "{}:", quote(key));
        }
        self.value().compact(out);
    }

    fn value(&self) -> &Out {
        match self {
            Element::Member(_, v) | Element::Item(v) => v,
        }
    }
}

/// A replacement of `span` by `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// What is replaced (empty for an insertion).
    pub span: Span,
    /// The new text.
    pub text: String,
}

/// Applies non-overlapping edits.
pub fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0;
    for edit in edits {
        debug_assert!(edit.span.start >= at, "overlapping edits");
        out.push_str(&text[at..edit.span.start]);
        out.push_str(&edit.text);
        at = edit.span.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The leading whitespace of the line holding byte `pos`.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The edit that appends `elements` at the end of `container`:
///
/// - a non-empty container laid out one element per line gets
///   `,⏎<indent>element` after its last element, with the last element's
///   indentation;
/// - a non-empty container on one line gets `,element` in compact form;
/// - an empty container is opened up: `{⏎<indent+unit>element⏎<indent>}`.
///
/// [`remove`] of the same elements gives back the exact original bytes
/// (an empty container comes back as `{}`/`[]`).
pub fn append(text: &str, container: &Node, elements: &[Element], style: &Style) -> Edit {
    let span = container.span();
    let existing = container.element_spans();
    let mut out = String::new();
    match (existing.first(), existing.last()) {
        (Some(first), Some(last)) => {
            let multiline = text[span.start + 1..first.start].contains('\n');
            let line_start = text[..last.start].rfind('\n').map_or(0, |i| i + 1);
            let before_last = &text[line_start..last.start];
            let indent = if before_last.trim_start_matches([' ', '\t']).is_empty() {
                before_last.to_string()
            } else {
                format!("{}{}", line_indent(text, span.start), style.unit)
            };
            for element in elements {
                out.push(',');
                if multiline {
                    out.push_str(style.newline);
                    out.push_str(&indent);
                    element.pretty(&indent, style, &mut out);
                } else {
                    element.compact(&mut out);
                }
            }
            Edit {
                span: Span {
                    start: last.end,
                    end: last.end,
                },
                text: out,
            }
        }
        _ => {
            let outer = line_indent(text, span.start);
            let inner = format!("{outer}{}", style.unit);
            for (i, element) in elements.iter().enumerate() {
                out.push_str(if i == 0 { "" } else { "," });
                out.push_str(style.newline);
                out.push_str(&inner);
                element.pretty(&inner, style, &mut out);
            }
            out.push_str(style.newline);
            out.push_str(outer);
            Edit {
                span: Span {
                    start: span.start + 1,
                    end: span.end - 1,
                },
                text: out,
            }
        }
    }
}

/// The edits that remove the elements of `container` whose index is marked
/// in `remove` (the inverse of [`append`]): a run of removed elements takes
/// the separator before it with it (or, at the start, the one after it);
/// removing every element leaves `{}`/`[]`.
pub fn remove(container: &Node, remove: &[bool]) -> Vec<Edit> {
    let spans = container.element_spans();
    let span = container.span();
    if !spans.is_empty() && remove.iter().take(spans.len()).all(|r| *r) {
        return vec![Edit {
            span: Span {
                start: span.start + 1,
                end: span.end - 1,
            },
            text: String::new(),
        }];
    }
    let mut edits = Vec::new();
    let mut i = 0;
    while i < spans.len() {
        if !remove.get(i).copied().unwrap_or(false) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < spans.len() && remove.get(j + 1).copied().unwrap_or(false) {
            j += 1;
        }
        let cut = if i > 0 {
            Span {
                start: spans[i - 1].end,
                end: spans[j].end,
            }
        } else {
            Span {
                start: spans[0].start,
                end: spans[j + 1].start,
            }
        };
        edits.push(Edit {
            span: cut,
            text: String::new(),
        });
        i = j + 1;
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(key: &str, n: u64) -> Element {
        Element::Member(key.into(), Out::Int(n))
    }

    #[test]
    fn spans_cover_values_exactly() {
        let text = r#" { "a" : [1, "x\"y", {"b":null}], "c\u0041": -1.5e3 } "#;
        let root = parse(text).unwrap();
        let Node::Object { members, span } = &root else {
            panic!()
        };
        assert_eq!(&text[span.start..span.end], text.trim());
        assert_eq!(members[0].key, "a");
        assert_eq!(members[1].key, "cA");
        let spans: Vec<&str> = members[0]
            .value
            .items()
            .iter()
            .map(|n| &text[n.span().start..n.span().end])
            .collect();
        assert_eq!(spans, ["1", r#""x\"y""#, r#"{"b":null}"#]);
        let v = &members[1].value.span();
        assert_eq!(&text[v.start..v.end], "-1.5e3");
    }

    #[test]
    fn syntax_errors_have_line_and_column() {
        let err = parse("{\n  // comment\n  \"a\": 1\n}").unwrap_err();
        assert_eq!((err.line, err.column), (2, 3));
        assert!(!err.message.contains("at line"), "{}", err.message);
        let err = parse("{\"a\": 1,}").unwrap_err();
        assert_eq!(err.line, 1);
    }

    #[test]
    fn append_then_remove_restores_the_bytes() {
        for text in [
            "{\n  \"a\": 1\n}\n",
            "{\n    \"a\": 1,\n    \"b\": 2\n}",
            "{\"a\":1}",
            "{ \"a\": 1 }",
            "{}",
            "\t{\r\n\t\t\"a\": 1\r\n\t}\r\n",
        ] {
            let root = parse(text).unwrap();
            let style = Style::detect(text);
            let edit = append(text, &root, &[member("x", 1), member("y", 2)], &style);
            let grown = apply(text, vec![edit]);
            let again = parse(&grown).unwrap();
            let n = again.element_spans().len();
            let marks: Vec<bool> = (0..n).map(|i| i >= n - 2).collect();
            let shrunk = apply(&grown, remove(&again, &marks));
            assert_eq!(shrunk, text, "grown: {grown:?}");
        }
    }

    #[test]
    fn appended_text_matches_the_neighbours() {
        let text = "{\n    \"a\": {\n        \"k\": 1\n    }\n}\n";
        let root = parse(text).unwrap();
        let a = &root.get("a").unwrap().value;
        let edit = append(
            text,
            a,
            &[Element::Member(
                "n".into(),
                Out::Object(vec![("z".into(), Out::Array(vec![Out::Bool(true)]))]),
            )],
            &Style::detect(text),
        );
        assert_eq!(
            apply(text, vec![edit]),
            "{\n    \"a\": {\n        \"k\": 1,\n        \"n\": {\n            \"z\": [\n                true\n            ]\n        }\n    }\n}\n"
        );
        let crlf = "{\r\n  \"a\": {}\r\n}";
        let root = parse(crlf).unwrap();
        let edit = append(
            crlf,
            &root.get("a").unwrap().value,
            &[member("x", 1)],
            &Style::detect(crlf),
        );
        assert_eq!(
            apply(crlf, vec![edit]),
            "{\r\n  \"a\": {\r\n    \"x\": 1\r\n  }\r\n}"
        );
    }

    #[test]
    fn removing_a_first_or_middle_run() {
        let text = "[1, 2, 3, 4]";
        let root = parse(text).unwrap();
        assert_eq!(
            apply(text, remove(&root, &[true, true, false, false])),
            "[3, 4]"
        );
        assert_eq!(
            apply(text, remove(&root, &[false, true, false, true])),
            "[1, 3]"
        );
        assert_eq!(apply(text, remove(&root, &[true; 4])), "[]");
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncé d", 7), (2, 4));
    }
}
