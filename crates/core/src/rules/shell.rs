//! Splitting a Bash tool command into the simple commands that would run.
//!
//! Rules on `Bash(...)` are judged per simple command, so a rule on `rm` catches
//! `ls && rm -rf x`. This is a small shell *reader*, not a shell: it knows enough
//! of the grammar to find command boundaries (`&&`, `||`, `;`, `&`, `|`, `|&`,
//! newlines), the commands hidden inside substitutions (`$( )`, backticks,
//! `<( )`, `>( )`), subshells and groups, quoting (`'…'`, `"…"`, `$'…'`,
//! backslashes), comments and here-documents. It never expands anything.
//!
//! Each simple command becomes a [`Segment`] of unquoted words, with one or more
//! [`View`]s: the command as written (the *literal* view, used by allow rules) and
//! the same command with leading `NAME=value` assignments and wrappers such as
//! `sudo`, `env`, `nice`, `timeout`, `xargs` stripped (used by deny/ask rules only,
//! so a wrapper cannot hide a command from a deny rule, and never widens an allow).
//! `sh -c '…'`, `bash -c '…'` (and zsh, dash, ksh) and `eval …` have their
//! argument split again as commands of their own.
//! A program name built by a substitution (`$()rm`, `$(true)rm`) is also
//! read without it (`rm`, deny/ask only), and its command is uncertain.
//! `shell_vs_bash.rs` checks the splitter against bash itself on generated
//! commands.
//!
//! A command that cannot be read (unbalanced quotes or parentheses, a `case`
//! statement, nesting deeper than [`MAX_DEPTH`]) is marked *uncertain*: it is
//! re-read with every quote, parenthesis and `$` treated as a blank, every
//! piece from either reading is kept, and the evaluator lets deny/ask rules
//! match any piece while allow rules (other than a bare `Bash`) never match.
//!
//! # Cost
//!
//! Reading is linear in the command: every byte is looked at a bounded
//! number of times (once per reading, and once more per enclosing
//! substitution whose text is kept in a word, at most [`MAX_DEPTH`]).
//! What could grow faster is capped, and a command past a cap is *too large
//! to analyse* ([`ParsedCommand::too_large`]): longer than
//! [`MAX_COMMAND_BYTES`], more than [`MAX_SEGMENTS`] simple commands, a
//! command behind more than [`MAX_VIEWS`] wrappers, or `sh -c` / `eval`
//! strings adding up to more than [`SCRIPT_BYTES_PER_BYTE`] times the
//! command (`eval eval eval …` re-reads the rest of the line each time). The evaluator then judges it
//! conservatively without splitting it (see `eval.rs`).

/// Nesting limit for substitutions, subshells and `sh -c` strings; deeper input
/// is judged uncertain rather than risking unbounded recursion.
pub(crate) const MAX_DEPTH: usize = 16;

/// Longest command that is split; longer ones are too large to analyse.
pub(crate) const MAX_COMMAND_BYTES: usize = 1 << 20;

/// Most simple commands read from one command (all readings, `sh -c` and
/// `eval` strings included).
pub(crate) const MAX_SEGMENTS: usize = 4096;

/// `sh -c` / `eval` strings re-read for one command, at most this many bytes
/// per byte of the command plus [`SCRIPT_BYTES_EXTRA`]: room for a script
/// holding a script holding a script, not for `eval eval eval …`.
pub(crate) const SCRIPT_BYTES_PER_BYTE: usize = 4;

/// See [`SCRIPT_BYTES_PER_BYTE`].
pub(crate) const SCRIPT_BYTES_EXTRA: usize = 4096;

/// Most readings of one simple command (the literal one, then one more per
/// wrapper or assignment stripped, and per `/path/to/` program).
pub(crate) const MAX_VIEWS: usize = 16;

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    /// The command's words, unquoted (`"a b"` → `a b`, `\x` → `x`); substitutions
    /// and redirection operators are kept as their source text.
    pub words: Vec<String>,
    /// The literal view first, then stripped views (deny/ask only).
    pub views: Vec<View>,
    /// The command came from input that could not be read reliably.
    pub uncertain: bool,
    /// Segments joined by `|` share a pipeline number.
    pub pipeline: usize,
    /// Nesting depth it was read at; an `sh -c` string in it is read one
    /// deeper, so [`MAX_DEPTH`] bounds nesting across `sh -c` too.
    pub depth: usize,
}

/// One way of reading a segment: which word is the program, and the text that
/// `Bash(...)` patterns are matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct View {
    /// Index into [`Segment::words`] of the program word.
    pub start: usize,
    /// Words from `start` joined by single spaces (the program replaced by its
    /// basename for a basename view).
    pub text: String,
    /// The command as written; only literal views can satisfy allow rules.
    pub literal: bool,
    /// What was stripped to get here, for explanations (empty for literal).
    pub stripped: String,
}

impl View {
    /// The program name as matched (first word of `text`).
    pub fn program(&self) -> &str {
        self.text.split(' ').next().unwrap_or("")
    }
}

/// The result of reading one command string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedCommand {
    /// Never empty: a command with no words yields one empty segment, so rules
    /// that match any Bash command still have something to match.
    pub segments: Vec<Segment>,
    /// The command could not be read reliably (see the module doc).
    pub uncertain: bool,
    /// The command is too large to analyse (see the module doc): it was not
    /// split, `segments` holds one empty, uncertain command.
    pub too_large: bool,
    /// Per pipeline number, its commands' literal texts joined by ` | `.
    pipelines: Vec<PipelineText>,
}

/// A pipeline's text: none, its one command's literal text (most
/// pipelines: no copy of it), or its commands' joined by ` | `.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PipelineText {
    Empty,
    One(usize),
    Joined(String),
}

impl ParsedCommand {
    /// A command not split because it is too large to analyse.
    fn too_large() -> ParsedCommand {
        ParsedCommand {
            segments: vec![empty_segment(true, 0)],
            uncertain: true,
            too_large: true,
            pipelines: vec![PipelineText::Empty],
        }
    }

    /// The literal texts of the segments in pipeline `p`, joined with ` | `.
    pub fn pipeline_text(&self, p: usize) -> &str {
        match self.pipelines.get(p) {
            Some(PipelineText::One(si)) => literal_text(&self.segments[*si]),
            Some(PipelineText::Joined(text)) => text,
            Some(PipelineText::Empty) | None => "",
        }
    }
}

/// A command's literal text (its first view's).
fn literal_text(s: &Segment) -> &str {
    s.views.first().map_or("", |v| v.text.as_str())
}

/// Join each pipeline's literal segment texts once, so `$pipeline` costs the
/// same however many rules look at it.
fn pipeline_texts(segments: &[Segment], count: usize) -> Vec<PipelineText> {
    let mut out = vec![PipelineText::Empty; count];
    let join = |mut joined: String, text: &str| {
        if !joined.is_empty() {
            joined.push_str(" | ");
        }
        joined.push_str(text);
        PipelineText::Joined(joined)
    };
    for (si, s) in segments.iter().enumerate() {
        if let Some(slot) = out.get_mut(s.pipeline) {
            *slot = match std::mem::replace(slot, PipelineText::Empty) {
                PipelineText::Empty => PipelineText::One(si),
                PipelineText::One(first) => {
                    join(literal_text(&segments[first]).to_string(), literal_text(s))
                }
                PipelineText::Joined(joined) => join(joined, literal_text(s)),
            };
        }
    }
    out
}

/// What reading one command may still use up before it is too large to
/// analyse.
struct Budget {
    /// Simple commands that may still be read.
    segments: usize,
    /// Bytes of `sh -c` / `eval` strings that may still be re-read.
    script_bytes: usize,
    /// A cap was reached.
    exceeded: bool,
    /// Bytes looked at and copied, for the tests that check reading stays
    /// linear ([`split_counting`]).
    work: u64,
}

impl Budget {
    /// Takes one simple command; false (and `exceeded`) when there is none left.
    fn take_segment(&mut self) -> bool {
        if self.segments == 0 {
            self.exceeded = true;
            return false;
        }
        self.segments -= 1;
        true
    }
}

/// Split `command` into simple commands.
pub(crate) fn split(command: &str) -> ParsedCommand {
    split_counting(command).0
}

/// [`split`], and how many bytes it looked at and copied doing it: every
/// byte peeked (by every reading), copied into a word, or written into a
/// command's text. The tests hold this to a small multiple of the input.
pub(crate) fn split_counting(command: &str) -> (ParsedCommand, u64) {
    if command.len() > MAX_COMMAND_BYTES {
        return (ParsedCommand::too_large(), 0);
    }
    let mut budget = Budget {
        segments: MAX_SEGMENTS,
        script_bytes: SCRIPT_BYTES_PER_BYTE * command.len() + SCRIPT_BYTES_EXTRA,
        exceeded: false,
        work: 0,
    };
    let mut raw = Vec::new();
    let mut next_pipeline = 0;
    let ok = read(command, 0, &mut raw, &mut next_pipeline, &mut budget);
    let mut uncertain = !ok;
    if !ok {
        reread_blanked(command, &mut raw, &mut next_pipeline, &mut budget);
    }
    let mut segments = raw;
    if !read_scripts(&mut segments, &mut next_pipeline, &mut budget) {
        uncertain = true;
    }
    if budget.exceeded {
        return (ParsedCommand::too_large(), budget.work);
    }
    if segments.is_empty() {
        segments.push(empty_segment(uncertain, next_pipeline));
    }
    let pipelines = pipeline_texts(&segments, next_pipeline + 1);
    budget.work += pipelines
        .iter()
        .map(|p| match p {
            PipelineText::Joined(text) => text.len() as u64,
            _ => 0,
        })
        .sum::<u64>();
    let parsed = ParsedCommand {
        segments,
        uncertain,
        too_large: false,
        pipelines,
    };
    (parsed, budget.work)
}

/// The second reading of a command the first could not read: every
/// segment read so far is marked uncertain, and the command is read again
/// with quotes, parentheses and `$` as blanks, so text hidden behind an
/// unbalanced quote or nested too deep still shows up as commands (all
/// uncertain too).
fn reread_blanked(
    command: &str,
    raw: &mut Vec<Segment>,
    next_pipeline: &mut usize,
    budget: &mut Budget,
) {
    for s in raw.iter_mut() {
        s.uncertain = true;
    }
    let blanked: String = command
        .chars()
        .map(|c| match c {
            '\'' | '"' | '`' | '(' | ')' | '\\' | '$' => ' ',
            c => c,
        })
        .collect();
    let mut more = Vec::new();
    read(&blanked, MAX_DEPTH, &mut more, next_pipeline, budget);
    for mut s in more {
        s.uncertain = true;
        raw.push(s);
    }
}

/// `sh -c STRING` and `eval ARGS`: reads the string as commands too,
/// appending them to `segments` (and reading theirs in turn). The strings
/// read count against the budget: `eval eval eval …` would otherwise
/// re-read the rest of the line once per word. False if one of them could
/// not be read reliably.
fn read_scripts(
    segments: &mut Vec<Segment>,
    next_pipeline: &mut usize,
    budget: &mut Budget,
) -> bool {
    let mut ok = true;
    let mut i = 0;
    while i < segments.len() && !budget.exceeded {
        if let Some(script) = inner_script(&segments[i]) {
            if script.len() > budget.script_bytes {
                budget.exceeded = true;
                break;
            }
            budget.script_bytes -= script.len();
            budget.work += script.len() as u64;
            let mut inner = Vec::new();
            let depth = segments[i].depth + 1;
            let inner_ok = read(&script, depth, &mut inner, next_pipeline, budget);
            let outer_uncertain = segments[i].uncertain;
            for mut s in inner {
                s.uncertain |= !inner_ok || outer_uncertain;
                segments.push(s);
            }
            if !inner_ok {
                ok = false;
            }
        }
        i += 1;
    }
    ok
}

/// A command with no words, so rules that match any Bash command still have
/// something to match.
fn empty_segment(uncertain: bool, pipeline: usize) -> Segment {
    Segment {
        words: Vec::new(),
        views: vec![View {
            start: 0,
            text: String::new(),
            literal: true,
            stripped: String::new(),
        }],
        uncertain,
        pipeline,
        depth: 0,
    }
}

/// Read `src` at nesting `depth`, appending finished segments. Returns false if
/// the input could not be read reliably. Stops early once `budget` is spent.
fn read(
    src: &str,
    depth: usize,
    out: &mut Vec<Segment>,
    next_pipeline: &mut usize,
    budget: &mut Budget,
) -> bool {
    let mut r = Reader {
        src: src.as_bytes(),
        pos: 0,
        ok: true,
        depth,
        out,
        next_pipeline,
        budget,
        heredocs: Vec::new(),
        want_delimiter: None,
        in_backticks: 0,
        work: std::cell::Cell::new(0),
    };
    r.list(End::Eof);
    r.budget.work += r.work.get();
    r.ok
}

/// Redirection operators, longest first so the first prefix match is right.
pub(crate) const REDIRECTIONS: [&str; 12] = [
    "&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<<", "<>", "<&", ">", "<",
];

/// What ends the command list being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Eof,
    Paren,
    Backtick,
}

/// A here-document whose body starts at the next newline.
struct Heredoc {
    delimiter: String,
    strip_tabs: bool,
    /// Unquoted delimiter: substitutions in the body run.
    expands: bool,
}

struct Reader<'s, 'o> {
    src: &'s [u8],
    pos: usize,
    ok: bool,
    depth: usize,
    out: &'o mut Vec<Segment>,
    next_pipeline: &'o mut usize,
    budget: &'o mut Budget,
    heredocs: Vec<Heredoc>,
    /// Set after `<<` / `<<-`: the next word is a here-document delimiter
    /// (the flag says whether leading tabs are stripped).
    want_delimiter: Option<bool>,
    /// Inside a backtick substitution an unescaped backtick always closes it.
    in_backticks: usize,
    /// Bytes looked at and copied so far (see [`split_counting`]).
    work: std::cell::Cell<u64>,
}

impl Reader<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.work.set(self.work.get() + 1);
        self.src.get(self.pos).copied()
    }

    /// Appends `bytes` to a word being built.
    fn copy(&self, buf: &mut Vec<u8>, bytes: &[u8]) {
        self.work.set(self.work.get() + bytes.len() as u64);
        buf.extend_from_slice(bytes);
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.src.get(self.pos + n).copied()
    }

    fn new_pipeline(&mut self) -> usize {
        let p = *self.next_pipeline;
        *self.next_pipeline += 1;
        p
    }

    fn finish(&mut self, words: &mut Vec<String>, pipeline: usize) {
        if words.is_empty() {
            return;
        }
        let words = std::mem::take(words);
        let seg = match make_segment(words, pipeline) {
            Ok(Some(seg)) if self.budget.take_segment() => {
                let text: usize = seg.views.iter().map(|v| v.text.len()).sum();
                self.work.set(self.work.get() + text as u64);
                Segment {
                    depth: self.depth,
                    ..seg
                }
            }
            Ok(None) => return,
            // Over a cap: stop reading; the command is too large to analyse.
            Ok(Some(_)) | Err(TooManyViews) => {
                self.budget.exceeded = true;
                self.pos = self.src.len();
                return;
            }
        };
        self.out.push(seg);
    }

    /// Read a command list up to `end`.
    fn list(&mut self, end: End) {
        let mut words: Vec<String> = Vec::new();
        let mut pipeline = self.new_pipeline();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                if end != End::Eof {
                    self.ok = false;
                }
                self.finish(&mut words, pipeline);
                return;
            };
            match c {
                b')' if end == End::Paren => {
                    self.pos += 1;
                    self.finish(&mut words, pipeline);
                    return;
                }
                b'`' if end == End::Backtick => {
                    self.pos += 1;
                    self.finish(&mut words, pipeline);
                    return;
                }
                b'&' if self.peek_at(1) == Some(b'>') => self.push_word(&mut words),
                b')' | b'\n' | b';' | b'&' | b'|' => self.separator(c, &mut words, &mut pipeline),
                b'(' => self.open_paren(&mut words, &mut pipeline),
                b'#' => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.pos += 1;
                    }
                }
                _ => self.push_word(&mut words),
            }
        }
    }

    /// At `c`, a separator (`;` with any `;` or `&` right after it, `&`,
    /// `&&`, `|`, `||`, `|&`, a newline) or a `)` that closes nothing: ends
    /// the command being read and, unless it is a pipe, its pipeline.
    fn separator(&mut self, c: u8, words: &mut Vec<String>, pipeline: &mut usize) {
        self.pos += 1;
        let mut ends_pipeline = true;
        match c {
            // Unbalanced, or a `case` pattern: not something we read.
            b')' => self.ok = false,
            b';' => {
                while matches!(self.peek(), Some(b';' | b'&')) {
                    self.pos += 1;
                }
            }
            b'&' if self.peek() == Some(b'&') => self.pos += 1,
            b'|' => {
                let or = self.peek() == Some(b'|');
                if or || self.peek() == Some(b'&') {
                    self.pos += 1;
                }
                ends_pipeline = or;
            }
            _ => {}
        }
        self.finish(words, *pipeline);
        if c == b'\n' {
            self.read_heredocs();
        }
        if ends_pipeline {
            *pipeline = self.new_pipeline();
        }
    }

    /// At `(`: a subshell, or after `name` the `()` of a function definition.
    fn open_paren(&mut self, words: &mut Vec<String>, pipeline: &mut usize) {
        if !words.is_empty() {
            // `name() { …; }` is a function definition; anything
            // else here is a syntax error we judge conservatively.
            let save = self.pos;
            self.pos += 1;
            self.skip_blanks();
            if self.peek() == Some(b')') {
                self.pos += 1;
                words.clear();
                return;
            }
            self.pos = save;
            self.ok = false;
            self.finish(words, *pipeline);
            *pipeline = self.new_pipeline();
        }
        self.pos += 1;
        self.nested(End::Paren);
    }

    fn push_word(&mut self, words: &mut Vec<String>) {
        let start = self.pos;
        let (word, quoted) = self.word();
        if let Some(strip_tabs) = self.want_delimiter.take() {
            self.heredocs.push(Heredoc {
                delimiter: word.clone(),
                strip_tabs,
                expands: !quoted,
            });
        }
        if word == "<<" || word == "<<-" {
            self.want_delimiter = Some(word == "<<-");
        }
        if self.pos == start {
            // Defensive: never loop without progress.
            self.pos += 1;
            self.ok = false;
            return;
        }
        words.push(word);
    }

    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b'\\') if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                _ => return,
            }
        }
    }

    /// Read a nested command list (subshell or substitution body).
    fn nested(&mut self, end: End) {
        if self.depth >= MAX_DEPTH {
            self.ok = false;
            self.skip_to_end(end);
            return;
        }
        self.depth += 1;
        let bt = usize::from(end == End::Backtick);
        self.in_backticks += bt;
        self.list(end);
        self.in_backticks -= bt;
        self.depth -= 1;
    }

    /// Too deep to read: skip to the matching terminator, counting nesting.
    fn skip_to_end(&mut self, end: End) {
        let mut depth = 1usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match (end, c) {
                (End::Paren, b'(') => depth += 1,
                (End::Paren, b')') | (End::Backtick, b'`') => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// Read one word; returns its unquoted text and whether any of it was quoted.
    fn word(&mut self) -> (String, bool) {
        // Room for most words at once (the buffer becomes the word).
        let mut buf: Vec<u8> = Vec::with_capacity(16);
        let mut quoted = false;
        // Redirection operators are words of their own (`2>&1`, `>>`, `<<-`).
        if let Some(op) = self.redirection(&buf) {
            return (op, false);
        }
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b')' => break,
                b'(' => {
                    // Array assignment `a=(x y)` and extglob `@(a|b)` stay in the word.
                    if matches!(buf.last(), Some(b'=' | b'@' | b'?' | b'*' | b'+' | b'!')) {
                        self.copy_balanced(&mut buf);
                    } else {
                        break;
                    }
                }
                b'<' | b'>' => {
                    if buf.iter().all(u8::is_ascii_digit) {
                        if let Some(op) = self.redirection(&buf) {
                            return (op, false);
                        }
                    }
                    break;
                }
                b'\'' => {
                    quoted = true;
                    self.pos += 1;
                    match self.src[self.pos..].iter().position(|&b| b == b'\'') {
                        Some(n) => {
                            self.copy(&mut buf, &self.src[self.pos..self.pos + n]);
                            self.pos += n + 1;
                        }
                        None => {
                            self.ok = false;
                            self.copy(&mut buf, &self.src[self.pos..]);
                            self.pos = self.src.len();
                        }
                    }
                }
                b'"' => {
                    quoted = true;
                    self.pos += 1;
                    self.double_quoted(&mut buf);
                }
                b'\\' => {
                    quoted = true;
                    match self.peek_at(1) {
                        Some(b'\n') => self.pos += 2,
                        Some(n) => {
                            buf.push(n);
                            self.pos += 2;
                        }
                        None => self.pos += 1,
                    }
                }
                b'$' => self.dollar(&mut buf, &mut quoted),
                b'`' if self.in_backticks > 0 => break,
                b'`' => self.backticks(&mut buf),
                _ => {
                    buf.push(c);
                    self.pos += 1;
                }
            }
        }
        (into_string(buf), quoted)
    }

    /// If a redirection operator starts here (after the fd digits in `fd`),
    /// consume it and return it as a word.
    fn redirection(&mut self, fd: &[u8]) -> Option<String> {
        let rest = &self.src[self.pos..];

        // Process substitution: the body is a command list.
        if matches!(rest, [b'<' | b'>', b'(', ..]) && fd.is_empty() {
            let start = self.pos;
            self.pos += 2;
            self.nested(End::Paren);
            return Some(String::from_utf8_lossy(&self.src[start..self.pos]).into_owned());
        }
        let op = REDIRECTIONS
            .iter()
            .find(|op| rest.starts_with(op.as_bytes()))?;
        self.pos += op.len();
        let mut word = fd.to_vec();
        word.extend_from_slice(op.as_bytes());
        Some(String::from_utf8_lossy(&word).into_owned())
    }

    /// Inside `"…"`, positioned after the opening quote.
    fn double_quoted(&mut self, buf: &mut Vec<u8>) {
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    self.pos += 1;
                    return;
                }
                b'\\' => match self.peek_at(1) {
                    Some(b'\n') => self.pos += 2,
                    Some(n @ (b'$' | b'`' | b'"' | b'\\')) => {
                        buf.push(n);
                        self.pos += 2;
                    }
                    _ => {
                        buf.push(b'\\');
                        self.pos += 1;
                    }
                },
                b'$' => {
                    let mut q = true;
                    self.dollar(buf, &mut q);
                }
                b'`' => self.backticks(buf),
                _ => {
                    buf.push(c);
                    self.pos += 1;
                }
            }
        }
        self.ok = false;
    }

    /// A `` `…` `` substitution starting here: its commands are read as a
    /// nested list, and its text is kept in the word being built.
    fn backticks(&mut self, buf: &mut Vec<u8>) {
        let start = self.pos;
        self.pos += 1;
        self.nested(End::Backtick);
        self.copy(buf, &self.src[start..self.pos]);
    }

    /// At a `$`: substitution, arithmetic, parameter expansion or `$'…'`.
    fn dollar(&mut self, buf: &mut Vec<u8>, quoted: &mut bool) {
        let start = self.pos;
        match self.peek_at(1) {
            Some(b'(') => {
                // `$( )`, and arithmetic `$(( ))`, which may itself contain
                // `$( )`, so it is read as a nested list too; harmless words
                // at worst.
                self.pos += 2;
                self.nested(End::Paren);
                self.copy(buf, &self.src[start..self.pos]);
            }
            Some(b'{') => self.parameter(start, buf),
            Some(b'\'') => {
                *quoted = true;
                self.pos += 2;
                self.ansi_c_quoted(buf);
            }
            Some(b'"') => {
                *quoted = true;
                self.pos += 2;
                self.double_quoted(buf);
            }
            _ => {
                buf.push(b'$');
                self.pos += 1;
            }
        }
    }

    /// A `${…}` expansion starting at `start`, kept as written.
    fn parameter(&mut self, start: usize, buf: &mut Vec<u8>) {
        self.pos += 2;
        let mut depth = 1usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b'\\' => self.pos += 1,
                _ => {}
            }
        }
        if depth != 0 {
            self.ok = false;
        }
        self.pos = self.pos.min(self.src.len());
        self.copy(buf, &self.src[start..self.pos]);
    }

    /// Inside `$'…'`, positioned after the opening quote: its text, each
    /// backslash dropped (the escapes are not decoded).
    fn ansi_c_quoted(&mut self, buf: &mut Vec<u8>) {
        loop {
            match self.peek() {
                None => {
                    self.ok = false;
                    break;
                }
                Some(b'\'') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    if let Some(n) = self.peek_at(1) {
                        buf.push(n);
                    }
                    self.pos = (self.pos + 2).min(self.src.len());
                }
                Some(c) => {
                    buf.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Copy a parenthesised group verbatim (array values, extglobs).
    fn copy_balanced(&mut self, buf: &mut Vec<u8>) {
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b'\\' => self.pos = (self.pos + 1).min(self.src.len()),
                _ => {}
            }
        }
        if depth != 0 {
            self.ok = false;
        }
        self.copy(buf, &self.src[start..self.pos]);
    }

    /// After a newline: skip the bodies of pending here-documents. Bodies with
    /// an unquoted delimiter are scanned for substitutions, which do run.
    fn read_heredocs(&mut self) {
        let pending = std::mem::take(&mut self.heredocs);
        for doc in pending {
            loop {
                if self.pos >= self.src.len() {
                    return;
                }
                let line_end = self.src[self.pos..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(self.src.len(), |n| self.pos + n);
                self.work
                    .set(self.work.get() + (line_end - self.pos) as u64 + 1);
                let mut line = &self.src[self.pos..line_end];
                if doc.strip_tabs {
                    while let [b'\t', rest @ ..] = line {
                        line = rest;
                    }
                }
                if line == doc.delimiter.as_bytes() {
                    self.pos = (line_end + 1).min(self.src.len());
                    break;
                }
                if doc.expands {
                    self.scan_expansions(line_end);
                    // A substitution may have run past the line end.
                    if self.pos > line_end {
                        continue;
                    }
                }
                self.pos = (line_end + 1).min(self.src.len());
            }
        }
    }

    /// Look for `$( )` and backticks between `pos` and `until`.
    fn scan_expansions(&mut self, until: usize) {
        while self.pos < until {
            match self.peek() {
                Some(b'\\') => self.pos = (self.pos + 2).min(self.src.len()),
                Some(b'$') if self.peek_at(1) == Some(b'(') => {
                    self.pos += 2;
                    self.nested(End::Paren);
                }
                Some(b'`') => {
                    self.pos += 1;
                    self.nested(End::Backtick);
                }
                _ => self.pos += 1,
            }
        }
    }
}

/// Reserved words that may precede a command and are not themselves commands.
const LEADING_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done", "esac",
];

/// Headers whose words are data, not a command (`for x in a b`).
const HEADER_KEYWORDS: &[&str] = &["for", "select", "case", "function", "in"];

/// Shells whose `-c STRING` argument is itself a command.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash"];

/// `bytes` as text, as `String::from_utf8_lossy` reads it, without a copy
/// when they are UTF-8 (nearly always).
fn into_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A simple command behind more than [`MAX_VIEWS`] wrappers.
struct TooManyViews;

/// Build a segment and its views from raw words; `None` for a segment that runs
/// nothing (a lone `fi`, a `for` header).
fn make_segment(words: Vec<String>, pipeline: usize) -> Result<Option<Segment>, TooManyViews> {
    let mut start = 0;
    while start < words.len() && LEADING_KEYWORDS.contains(&words[start].as_str()) {
        start += 1;
    }
    // Redirections may come first (`> out echo hi`, `done < file`).
    while start < words.len() && is_redirection(&words[start]) {
        start += 2;
    }
    if start >= words.len() || HEADER_KEYWORDS.contains(&words[start].as_str()) {
        return Ok(None);
    }
    let mut views = vec![make_view(&words, start, true, String::new(), None)];
    let mut k = start;
    let mut stripped = String::new();
    let mut uncertain = false;
    loop {
        // Each view copies the rest of the command: a command behind very
        // many wrappers (`sudo sudo sudo …`) would cost its length squared.
        if views.len() > MAX_VIEWS {
            return Err(TooManyViews);
        }
        // `/bin/rm` is also read as `rm`.
        if words[k].contains('/') && !is_assignment(&words[k]) {
            let basename = words[k].rsplit('/').next().unwrap_or("");
            if !basename.is_empty() {
                let note = join_note(&stripped, &format!("path of `{}`", words[k]));
                views.push(make_view(&words, k, false, note, Some(basename)));
            }
        }
        // `$()rm` and `$(true)rm` run `rm`: a program name built by a
        // substitution is also read without it, so deny and ask rules on
        // `rm` see it; what the substitution prints is unknown (`$(echo
        // r)m` runs `rm` too), so the command is uncertain and no allow
        // rule on a program vouches for it.
        if let Some(name) = without_substitutions(&words[k]) {
            uncertain = true;
            if !name.is_empty() {
                let note = join_note(&stripped, &format!("substitution in `{}`", words[k]));
                views.push(make_view(&words, k, false, note, Some(&name)));
            }
        }
        let Some((next, what)) = strip_once(&words, k) else {
            break;
        };
        if next >= words.len() {
            break;
        }
        stripped = join_note(&stripped, &what);
        k = next;
        views.push(make_view(&words, k, false, stripped.clone(), None));
    }
    Ok(Some(Segment {
        words,
        views,
        uncertain,
        pipeline,
        depth: 0,
    }))
}

fn join_note(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}, {b}")
    }
}

/// A view of `words` from `start`, the program word read as `program`
/// when given (its basename, or its name without substitutions).
fn make_view(
    words: &[String],
    start: usize,
    literal: bool,
    stripped: String,
    program: Option<&str>,
) -> View {
    let len = words[start..].iter().map(|w| w.len() + 1).sum::<usize>();
    let mut text = String::with_capacity(len + program.map_or(0, str::len));
    for (i, w) in words[start..].iter().enumerate() {
        if i > 0 {
            text.push(' ');
        }
        match program {
            Some(program) if i == 0 => text.push_str(program),
            _ => text.push_str(w),
        }
    }
    View {
        start,
        text,
        literal,
        stripped,
    }
}

/// `word` with its command substitutions (`$(…)`, nested ones included,
/// and backticks) removed, when it has any; `None` when it has none.
/// The reader keeps a substitution's source text in its word balanced, so
/// counting parentheses finds its end (a parenthesis quoted inside it may
/// cut it short: the name is then wrong, and the command is uncertain
/// anyway).
pub(crate) fn without_substitutions(word: &str) -> Option<String> {
    if !word.contains("$(") && !word.contains('`') {
        return None;
    }
    let mut out = String::new();
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' if chars.peek() == Some(&'(') => {
                let mut depth = 0usize;
                for c in chars.by_ref() {
                    match c {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            '`' => {
                for c in chars.by_ref() {
                    if c == '`' {
                        break;
                    }
                }
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// A redirection operator word such as `>`, `2>&` or `<<-`.
fn is_redirection(word: &str) -> bool {
    let op = word.trim_start_matches(|c: char| c.is_ascii_digit());
    REDIRECTIONS.iter().any(|r| r.as_bytes() == op.as_bytes())
}

/// `NAME=value` (a leading environment assignment).
pub(crate) fn is_assignment(word: &str) -> bool {
    let Some(eq) = word.find('=') else {
        return false;
    };
    let name = &word[..eq];
    let name = name.strip_suffix('+').unwrap_or(name);
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Wrappers that run their argument as a command, with the options that take a
/// separate value (so `sudo -u root rm` finds `rm`).
const WRAPPERS: &[(&str, &[&str])] = &[
    (
        "sudo",
        &[
            "-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "-T", "-R",
        ],
    ),
    ("doas", &["-u", "-C"]),
    ("env", &["-u", "-C", "-S", "--unset", "--chdir"]),
    ("nice", &["-n", "--adjustment"]),
    ("ionice", &["-c", "-n", "-p", "-P", "-u"]),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"]),
    ("stdbuf", &["-i", "-o", "-e"]),
    ("nohup", &[]),
    ("time", &["-f", "-o", "--format", "--output"]),
    ("command", &[]),
    ("builtin", &[]),
    ("exec", &["-a"]),
    (
        "xargs",
        &[
            "-I",
            "-n",
            "-P",
            "-L",
            "-l",
            "-d",
            "-E",
            "-e",
            "-s",
            "-a",
            "--arg-file",
            "--delimiter",
        ],
    ),
    ("setsid", &[]),
    ("unbuffer", &[]),
    // Multi-call binaries: `busybox rm -rf ~` runs `rm`.
    ("busybox", &[]),
    ("toybox", &[]),
    ("chronic", &[]),
    ("caffeinate", &["-t", "-w"]),
];

/// Strip one layer (assignments or one wrapper) starting at `k`; returns the
/// new program index and a note of what was stripped.
fn strip_once(words: &[String], k: usize) -> Option<(usize, String)> {
    if is_assignment(&words[k]) {
        let mut j = k;
        while j < words.len() && is_assignment(&words[j]) {
            j += 1;
        }
        return Some((j, "environment assignments".to_string()));
    }
    let name = words[k].rsplit('/').next().unwrap_or("");
    let (wrapper, arg_opts) = WRAPPERS.iter().find(|(w, _)| *w == name)?;
    let mut j = k + 1;
    while j < words.len() {
        let w = words[j].as_str();
        if w == "--" {
            j += 1;
            break;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        j += if arg_opts.contains(&w) { 2 } else { 1 };
    }
    if *wrapper == "timeout" && j < words.len() {
        j += 1; // the duration
    }
    if *wrapper == "env" {
        while j < words.len() && is_assignment(&words[j]) {
            j += 1;
        }
    }
    Some((j, format!("`{wrapper}`")))
}

/// For `sh -c STRING …` or `eval ARGS…` in any view of `seg`, the script to read.
fn inner_script(seg: &Segment) -> Option<String> {
    for view in &seg.views {
        let words = &seg.words[view.start..];
        let program = view.program();
        if program == "eval" && words.len() > 1 {
            return Some(words[1..].join(" "));
        }
        if SHELLS.contains(&program) {
            let mut has_c = false;
            for w in &words[1..] {
                if w.starts_with("--") {
                    continue;
                }
                if let Some(flags) = w.strip_prefix('-') {
                    has_c |= flags.contains('c');
                    continue;
                }
                if has_c {
                    return Some(w.clone());
                }
                break;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Literal texts of all segments.
    fn texts(cmd: &str) -> Vec<String> {
        split(cmd)
            .segments
            .iter()
            .map(|s| s.views[0].text.clone())
            .collect()
    }

    fn all_views(cmd: &str) -> Vec<String> {
        split(cmd)
            .segments
            .iter()
            .flat_map(|s| s.views.iter().map(|v| v.text.clone()))
            .collect()
    }

    #[test]
    fn splits_compound_commands() {
        let table: &[(&str, &[&str])] = &[
            ("ls", &["ls"]),
            ("ls && rm -rf x", &["ls", "rm -rf x"]),
            ("a || b; c | d", &["a", "b", "c", "d"]),
            ("a & b", &["a", "b"]),
            ("a |& b", &["a", "b"]),
            ("a\nb\n\nc", &["a", "b", "c"]),
            ("echo $(rm -rf x)", &["rm -rf x", "echo $(rm -rf x)"]),
            ("echo `rm x`", &["rm x", "echo `rm x`"]),
            ("(cd x && make)", &["cd x", "make"]),
            ("{ a; b; }", &["a", "b"]),
            ("echo \"$(whoami)\"", &["whoami", "echo $(whoami)"]),
            (
                "diff <(ls a) <(ls b)",
                &["ls a", "ls b", "diff <(ls a) <(ls b)"],
            ),
            ("echo 'a && b'", &["echo a && b"]),
            ("echo \"a; b\"", &["echo a; b"]),
            ("echo a\\;b", &["echo a;b"]),
            ("git  push   origin", &["git push origin"]),
            ("echo hi>out.txt", &["echo hi > out.txt"]),
            ("make 2>&1 | tee log", &["make 2>& 1", "tee log"]),
            ("cmd &> /dev/null", &["cmd &> /dev/null"]),
            ("ls # && rm -rf /", &["ls"]),
            ("if true; then rm -rf x; fi", &["true", "rm -rf x"]),
            ("for f in a b; do rm $f; done", &["rm $f"]),
            ("while read l; do echo $l; done < f", &["read l", "echo $l"]),
            ("> out echo hi", &["echo hi"]),
            ("f() { rm x; }", &["rm x"]),
            ("a=(1 2) b", &["a=(1 2) b"]),
            ("echo $'it\\'s'", &["echo it's"]),
            ("echo ${HOME}/x", &["echo ${HOME}/x"]),
            ("echo $((1+2))", &["1+2", "echo $((1+2))"]),
            ("", &[""]),
            ("   ", &[""]),
        ];
        for (cmd, want) in table {
            let got = texts(cmd);
            assert_eq!(got, *want, "split({cmd:?})");
            assert!(!split(cmd).uncertain, "{cmd:?} should be certain");
        }
    }

    /// A backslash as the last byte of an expanding here-document's body
    /// ran the reader past the end of the command and panicked (the daemon
    /// answered such a hook with its fallback).
    #[test]
    fn a_backslash_ending_a_here_document_is_read() {
        for cmd in ["<<c $(\n\\", "<<c `\n\\", "<<c <(\n\\", "cat <<c\nx\\"] {
            let parsed = std::panic::catch_unwind(|| split(cmd))
                .unwrap_or_else(|_| panic!("splitting {cmd:?} panicked"));
            assert!(!parsed.segments.is_empty(), "{cmd:?}");
        }
    }

    #[test]
    fn heredocs_are_data_unless_substituted() {
        let cmd = "cat <<EOF > f\nrm -rf /\n$(whoami)\nEOF\necho done";
        assert_eq!(texts(cmd), ["cat << EOF > f", "whoami", "echo done"]);
        let quoted = "cat <<'EOF'\n$(whoami)\nEOF\nls";
        assert_eq!(texts(quoted), ["cat << EOF", "ls"]);
        let tabs = "cat <<-EOF\n\trm x\n\tEOF\nls";
        assert_eq!(texts(tabs), ["cat <<- EOF", "ls"]);
    }

    #[test]
    fn strips_wrappers_for_deny_views() {
        let table: &[(&str, &[&str])] = &[
            ("FOO=1 rm -rf x", &["FOO=1 rm -rf x", "rm -rf x"]),
            ("sudo rm -rf /", &["sudo rm -rf /", "rm -rf /"]),
            (
                "sudo -u root env A=b nice -n 5 rm x",
                &[
                    "sudo -u root env A=b nice -n 5 rm x",
                    "env A=b nice -n 5 rm x",
                    "nice -n 5 rm x",
                    "rm x",
                ],
            ),
            (
                "timeout -s KILL 10 make",
                &["timeout -s KILL 10 make", "make"],
            ),
            ("/bin/rm -rf /", &["/bin/rm -rf /", "rm -rf /"]),
            ("find . | xargs -0 rm", &["find .", "xargs -0 rm", "rm"]),
            ("\\rm -rf x", &["rm -rf x"]),
            ("sudo", &["sudo"]),
            ("busybox rm -rf ~", &["busybox rm -rf ~", "rm -rf ~"]),
            ("toybox rm -r /", &["toybox rm -r /", "rm -r /"]),
        ];
        for (cmd, want) in table {
            assert_eq!(all_views(cmd), *want, "views({cmd:?})");
        }
        let seg = &split("sudo rm x").segments[0];
        assert!(seg.views[0].literal);
        assert!(!seg.views[1].literal);
        assert_eq!(seg.views[1].stripped, "`sudo`");
    }

    #[test]
    fn reads_shell_c_and_eval_strings() {
        assert_eq!(
            texts("bash -c 'ls && rm -rf /'"),
            ["bash -c ls && rm -rf /", "ls", "rm -rf /"]
        );
        assert_eq!(texts("sudo sh -ec \"rm x\""), ["sudo sh -ec rm x", "rm x"]);
        assert_eq!(texts("eval rm -rf x"), ["eval rm -rf x", "rm -rf x"]);
    }

    #[test]
    fn unreadable_commands_are_uncertain_and_resplit() {
        for cmd in [
            "echo \"unterminated && rm -rf /",
            "echo 'x; rm -rf /",
            "(rm -rf / ",
            "ls ) rm -rf /",
            "echo $(rm -rf /",
            "case x in a) rm -rf /;; esac",
        ] {
            let p = split(cmd);
            assert!(p.uncertain, "{cmd:?} should be uncertain");
            assert!(p.segments.iter().all(|s| s.uncertain));
            let views: Vec<_> = p.segments.iter().map(|s| s.views[0].text.clone()).collect();
            assert!(
                views.iter().any(|v| v.starts_with("rm -rf /")),
                "{cmd:?}: {views:?}"
            );
        }
    }

    #[test]
    fn deep_nesting_is_uncertain() {
        let cmd = format!("{}ls{}", "$(".repeat(40), ")".repeat(40));
        assert!(split(&cmd).uncertain);
        // What is nested too deep still shows up, as a command of its own.
        for (open, close) in [("$(", ")"), ("(", ")"), ("<(", ")"), ("$((", "))")] {
            let cmd = format!("{}rm -rf /{}", open.repeat(40), close.repeat(40));
            let p = split(&cmd);
            assert!(p.uncertain && !p.too_large, "{open}");
            let views: Vec<&str> = p
                .segments
                .iter()
                .flat_map(|s| s.views.iter().map(|v| v.text.as_str()))
                .collect();
            assert!(views.contains(&"rm -rf /"), "{open}: {views:?}");
        }
    }

    /// Past a cap the command is not split (the evaluator judges it
    /// conservatively); under the caps it is.
    #[test]
    fn caps_make_a_command_too_large_to_analyse() {
        let too_large = [
            "a".repeat(MAX_COMMAND_BYTES + 1),
            "a;".repeat(MAX_SEGMENTS + 1),
            "a | ".repeat(MAX_SEGMENTS + 1),
            format!("{}rm -rf /", "sudo ".repeat(MAX_VIEWS + 1)),
            format!("{}rm -rf /", "FOO=1 env ".repeat(MAX_VIEWS)),
            // Each `eval` re-reads the rest: quadratic without the budget.
            format!("{}rm -rf /", "eval ".repeat(1000)),
        ];
        for cmd in &too_large {
            let p = split(cmd);
            assert!(p.too_large && p.uncertain, "{}…", &cmd[..40.min(cmd.len())]);
            assert_eq!(p.segments.len(), 1);
        }
        let fine = [
            "a;".repeat(MAX_SEGMENTS - 1),
            format!("{}rm -rf /", "sudo ".repeat(MAX_VIEWS - 2)),
            format!("{}rm -rf /", "eval ".repeat(10)),
        ];
        for cmd in &fine {
            assert!(!split(cmd).too_large, "{}…", &cmd[..40.min(cmd.len())]);
        }
    }

    /// Generated nestings and repetitions of every construct the reader
    /// knows: reading always ends, and its work (bytes looked at and
    /// copied, all readings together) stays within a small multiple of the
    /// input, whatever the shape. Counted in operations, not time, so the
    /// machine's load cannot make it flaky.
    #[test]
    fn reading_is_linear_in_generated_nestings() {
        const OPENERS: &[(&str, &str)] = &[
            ("$(", ")"),
            ("`", "`"),
            ("\\`", "\\`"),
            ("(", ")"),
            ("{ ", "; }"),
            ("<(", ")"),
            ("\"", "\""),
            ("\"$(", ")\""),
            ("sh -c '", "'"),
            ("bash -c \"", "\""),
            ("eval ", ""),
            ("sudo ", ""),
            ("env A=1 ", ""),
            ("$((", "))"),
            ("${", "}"),
            ("a=(", ")"),
            ("cat <<EOF\n$(", ")\nEOF\n"),
            ("if true; then ", "; fi"),
        ];
        const FILLERS: &[&str] = &["a;", "a|", "a && ", "x ", "'", "\\", "#c\n", "\n"];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut worst = 0.0f64;
        for round in 0..400 {
            // Nest some constructs deeply, then repeat the whole to grow it.
            let depth = (next() % 3000) as usize;
            let (mut head, mut tail) = (String::new(), String::new());
            for _ in 0..depth {
                let (open, close) = OPENERS[(next() % OPENERS.len() as u64) as usize];
                head.push_str(open);
                tail.insert_str(0, close);
                if next() % 4 == 0 {
                    head.push_str(FILLERS[(next() % FILLERS.len() as u64) as usize]);
                }
            }
            let unit = format!("{head}rm -rf /{tail}");
            let cmd = unit.repeat(1 + (next() % 4) as usize);
            let (parsed, work) = split_counting(&cmd);
            assert!(!parsed.segments.is_empty(), "round {round}");
            assert!(parsed.segments.len() <= MAX_SEGMENTS + 1, "round {round}");
            // Per byte of input, and of the `sh -c` allowance every command
            // gets whatever its length.
            let ratio = work as f64 / (cmd.len() + SCRIPT_BYTES_EXTRA) as f64;
            worst = worst.max(ratio);
            // The structural bound: a byte is peeked a few times per
            // reading, copied once per enclosing substitution (at most
            // MAX_DEPTH), and read again by the blanked reading and by the
            // `sh -c` strings holding it (at most SCRIPT_BYTES_PER_BYTE).
            assert!(
                ratio < 256.0,
                "round {round}: {work} operations for {} bytes ({ratio:.1}×): {}…",
                cmd.len(),
                &cmd[..cmd.len().min(120)]
            );
        }
        eprintln!("reading: at worst {worst:.1} operations per byte");
    }

    /// Random soup of shell metacharacters and UTF-8 must never panic or hang.
    #[test]
    fn never_panics_on_garbage() {
        const ALPHABET: &[&str] = &[
            "a", " ", "'", "\"", "\\", "`", "$(", "$((", "${", "(", ")", "{", "}", ";", "&", "|",
            "<", ">", "<<", "<<-", "\n", "#", "=", "*", "é", "日本", "EOF", "sh -c ", "eval ",
            "$'", "2>&1", "sudo ", "\t",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..3000 {
            let mut cmd = String::new();
            let len = (seed % 40) as usize;
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                cmd.push_str(ALPHABET[(seed % ALPHABET.len() as u64) as usize]);
            }
            let p = split(&cmd);
            assert!(!p.segments.is_empty(), "{cmd:?}");
            for seg in &p.segments {
                assert!(!seg.views.is_empty(), "{cmd:?}");
                let _ = p.pipeline_text(seg.pipeline);
            }
        }
    }

    #[test]
    fn pipelines_are_numbered() {
        let p = split("curl -s x | sh; ls | wc -l");
        assert_eq!(p.segments[0].pipeline, p.segments[1].pipeline);
        assert_ne!(p.segments[1].pipeline, p.segments[2].pipeline);
        assert_eq!(p.pipeline_text(p.segments[0].pipeline), "curl -s x | sh");
    }
}
