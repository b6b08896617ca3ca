//! `when` conditions: tests on fields of the hook input.
//!
//! A condition names a `field` and one operator:
//!
//! - `equals` — the value equals a string, integer, float or boolean;
//! - `glob` — a string glob (`*` stays within `/`-separated parts, `**` crosses);
//! - `regex` — an unanchored regular expression (Rust `regex` syntax);
//! - `contains` — the string contains the text;
//! - `path` — the value, read as a path, matches a path pattern
//!   (see `path.rs`; the path itself, not what is below it);
//! - `exists` — `true` if the field is present and not null, `false` if absent;
//! - `not = { … }`, `any = [ … ]`, `all = [ … ]` — combinators; an inner
//!   condition without `field` uses the outer one.
//!
//! Every operator also accepts a list, meaning "any of these". A field whose
//! value is an array satisfies a condition when some element does. A missing
//! field satisfies nothing except `exists = false` (and so `not` of anything).
//! Numbers and booleans are compared as their JSON text by `glob`, `regex` and
//! `contains`.
//!
//! Fields are dotted paths into the raw hook input (`tool_input.command`,
//! `cwd`, `tool_calls.0.tool_name`; a numeric part indexes an array) or one of
//! the derived fields:
//!
//! - `$command` — one command of a split Bash command (see `shell.rs`), as
//!   matched by `Bash(...)` patterns;
//! - `$command.args` — that command's arguments (an array; `path` conditions
//!   on it expand `~`, `$HOME`, `$PWD`, `$CLAUDE_PROJECT_DIR`, read `dir/*`
//!   as `dir`, and skip option words starting with `-`);
//! - `$pipeline` — the commands of the pipeline it belongs to, joined by ` | `;
//! - `$path` — the absolute path a file tool touches (Read, Edit, Write,
//!   MultiEdit, NotebookEdit, Glob, Grep, LS).
//!
//! A rule whose conditions use `$command`, `$command.args` or `$pipeline` is
//! judged per command: its `Bash(...)` pattern and those conditions must hold
//! for the same command.

use super::path::{resolve, string_glob, Base, PathPattern, PathSet, ResolvedPath};
use super::shell::{ParsedCommand, Segment, View};
use globset::{GlobSet, GlobSetBuilder};
use regex::{Regex, RegexSet};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::HashMap;

/// What a leaf condition looks at.
#[derive(Debug, Clone)]
pub(crate) enum Field {
    /// A dotted path into the raw input.
    Input(Vec<String>),
    Command,
    CommandArgs,
    Pipeline,
    Path,
    /// `$signal.NAME`: a signal's value (see `signal.rs`).
    Signal(String),
}

/// The derived field names, for messages.
pub(crate) const DERIVED_FIELDS: &[&str] = &["$command", "$command.args", "$pipeline", "$path"];

impl Field {
    /// Parse a `field` value.
    pub fn parse(s: &str) -> Result<Field, String> {
        match s {
            "$command" => return Ok(Field::Command),
            "$command.args" => return Ok(Field::CommandArgs),
            "$pipeline" => return Ok(Field::Pipeline),
            "$path" => return Ok(Field::Path),
            _ => {}
        }
        if let Some(name) = s.strip_prefix(super::signal::FIELD_PREFIX) {
            if name.is_empty() || name.contains('.') {
                return Err(format!(
                    "`{s}` is not a signal field such as `$signal.branch`"
                ));
            }
            return Ok(Field::Signal(name.to_string()));
        }
        if s.starts_with('$') {
            return Err(format!(
                "unknown derived field `{s}`; known: {}, $signal.NAME",
                DERIVED_FIELDS.join(", ")
            ));
        }
        if s.is_empty() || s.split('.').any(str::is_empty) {
            return Err(format!(
                "`{s}` is not a dotted path such as `tool_input.command`"
            ));
        }
        Ok(Field::Input(s.split('.').map(str::to_string).collect()))
    }

    /// Judged per Bash command rather than once per event.
    pub fn per_command(&self) -> bool {
        matches!(self, Field::Command | Field::CommandArgs | Field::Pipeline)
    }
}

/// A compiled condition.
#[derive(Debug, Clone)]
pub(crate) enum Cond {
    Leaf {
        field: Field,
        name: String,
        /// Boxed: compiled glob and path sets are large.
        op: Box<Op>,
        /// Where this leaf's patterns sit in the rule set's [`CondSets`].
        slot: Option<Slot>,
    },
    Not(Box<Cond>),
    Any(Vec<Cond>),
    All(Vec<Cond>),
}

/// A scalar operand of `equals`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Str(s) => write!(f, "{s:?}"),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// A leaf operator with its compiled operands (any of them may match).
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Equals(Vec<Scalar>),
    Glob { set: GlobSet, src: Vec<String> },
    Regex(Vec<LazyRegex>),
    Contains(Vec<String>),
    Path { set: Box<PathSet>, src: Vec<String> },
    Exists(bool),
}

/// A `regex` operand. Compiled once when the rules are read, to report a
/// bad pattern, then dropped: the field's `RegexSet` in [`CondSets`]
/// answers for it, and it is compiled again only the first time it is
/// matched on its own (a group that did not compile as a set, an
/// evaluation without the sets). The standard profile's 165 regexes held
/// 3.5 MiB compiled beside their sets (docs/performance-history.md, #28).
#[derive(Debug, Clone)]
pub(crate) struct LazyRegex {
    src: Box<str>,
    re: std::sync::OnceLock<Regex>,
}

impl LazyRegex {
    pub fn new(src: &str) -> Result<LazyRegex, regex::Error> {
        Regex::new(src)?;
        Ok(LazyRegex {
            src: src.into(),
            re: std::sync::OnceLock::new(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.src
    }

    pub fn is_match(&self, s: &str) -> bool {
        self.re
            .get_or_init(|| Regex::new(&self.src).expect("compiled when the rules were read"))
            .is_match(s)
    }
}

/// The Bash command a per-command condition is judged on.
#[derive(Clone, Copy)]
pub(crate) struct CommandScope<'a> {
    pub parsed: &'a ParsedCommand,
    pub segment: &'a Segment,
    pub view: &'a View,
    /// Identifies (command, view) in the [`SetCache`].
    pub key: u64,
}

impl<'a> CommandScope<'a> {
    /// View `vi` of command `si` of `parsed`, keyed for the [`SetCache`].
    pub fn of(parsed: &'a ParsedCommand, si: usize, vi: usize) -> CommandScope<'a> {
        let segment = &parsed.segments[si];
        CommandScope {
            parsed,
            segment,
            view: &segment.views[vi],
            key: ((si as u64) << 32) | vi as u64,
        }
    }
}

/// A command view as evaluation judges it: the environment its
/// per-command conditions see, and where its block starts in the
/// [`SetCache`]: built once per view and layer, not once per (rule, view).
pub(crate) struct ViewScope<'a> {
    pub env: Env<'a>,
    block: usize,
}

/// Everything a condition can look at.
pub(crate) struct Env<'a> {
    pub input: &'a Value,
    /// The input's `tool_input` member, if it has one (`None`: look it up).
    pub tool_input: Option<&'a Value>,
    pub base: Base<'a>,
    /// The path a file tool touches, resolved.
    pub target: Option<&'a str>,
    pub command: Option<CommandScope<'a>>,
    /// The rule set's grouped patterns and this evaluation's results for them;
    /// without them every leaf is matched on its own (same answer, slower).
    pub sets: Option<(&'a CondSets, &'a SetCache)>,
    /// The project's known signal values.
    pub signals: Option<&'a super::signal::Signals>,
}

/// Regex, `contains`, glob and path conditions of all rules in a set,
/// grouped by field: `RegexSet`s of up to [`REGEX_CHUNK`] patterns (a
/// `contains` is an escaped literal in one), one `GlobSet` per field, one
/// [`PathSet`] per field (so each value is resolved to a path once per
/// group, not once per `path` leaf: the standard profile's fifteen
/// `$command.args` path leaves resolved every argument again each, a third
/// of the rules' instructions per decision). A 1,000-rule file
/// may test `cwd` or `$command.args` in hundreds of rules; with the groups,
/// each group is matched at most once per evaluation (per Bash command view
/// for `$command…`, per pipeline for `$pipeline`), only when one of its
/// leaves is asked, and each leaf only looks up its bits. So evaluation
/// reads each field's text once per group it needs: for a given rule set,
/// linear in the input (the regex engine is linear too).
/// The most regex patterns of one field in one `RegexSet`; a field's
/// patterns beyond it start another set (a leaf's own patterns are never
/// split: a leaf with more gets a set of its own). One set of the standard
/// profile's 118 `$command` patterns overflows the lazy DFA's 2 MiB cache
/// and the search falls back to a slower engine: 458 µs per command of the
/// corpora against 6.4 µs for sets of 24, and 4.6 µs for 32 (48 overflowed
/// again, 16 took 12.5 µs: more sets, each a search). Each set is matched
/// only when a candidate rule's leaf asks for it, so a command judged by
/// few rules runs few sets. Measured in docs/performance-history.md (#28).
const REGEX_CHUNK: usize = 24;

#[derive(Debug, Clone, Default)]
pub(crate) struct CondSets {
    groups: Vec<Group>,
    /// Per group: its computed bit in a [`SetCache`] scope's block, and
    /// where its bits start there. A per-event field's group is in the
    /// event's block, a `$command…` or `$pipeline` group in each view's or
    /// pipeline's, which hold only those: a command of thousands of views
    /// costs a block each of the per-command groups alone.
    done: Vec<u32>,
    offsets: Vec<u32>,
    /// The size of the event's block and of a view's or pipeline's.
    event_stride: usize,
    command_stride: usize,
    /// The needs of the rules judged only per command view, by the word
    /// they read ([`CondSets::index_needs`]).
    need_words: Vec<NeedWord>,
}

/// One word of a view's (or its pipeline's) block that rules' [`Need`]s
/// read, and those rules: evaluation looks at each such word once per
/// view, not once per (rule, view, need), and a word that is zero (most
/// sets match nothing) settles every rule listed at once.
#[derive(Debug, Clone)]
struct NeedWord {
    group: u32,
    pipeline: bool,
    at: u32,
    /// The events of the rules listed: the word is computed only for them.
    events: super::rule::EventSet,
    /// (rule index, mask): the rule's need is met when a bit of the mask
    /// is set.
    rules: Box<[(u32, u64)]>,
}

/// A group's patterns, compiled into one set the first time a leaf of a
/// candidate rule asks for it: a daemon holds only the sets its hooks have
/// needed (the standard profile's held 3.6 MiB compiled at load; an idle
/// daemon with it now holds none; docs/performance-history.md, #28). Every pattern
/// was compiled on its own when the rules were read, so a bad one is still
/// an error there; a group that fails to compile as a set (size limits)
/// leaves its leaves matching one by one.
#[derive(Debug, Clone)]
struct Group {
    field: Field,
    kind: Kind,
    pats: Box<[Box<str>]>,
    matcher: std::sync::OnceLock<Option<SetMatcher>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Regex,
    Glob,
    /// `path` leaves: their patterns in one [`PathSet`], so a value is
    /// resolved once per group, not once per leaf.
    Path,
}

impl Group {
    fn matcher(&self) -> Option<&SetMatcher> {
        self.matcher
            .get_or_init(|| match self.kind {
                Kind::Regex => RegexSet::new(self.pats.iter().map(|p| &**p))
                    .ok()
                    .map(SetMatcher::Regex),
                Kind::Glob => {
                    let mut b = GlobSetBuilder::new();
                    for p in self.pats.iter() {
                        b.add(string_glob(p).ok()?);
                    }
                    b.build().ok().map(SetMatcher::Glob)
                }
                Kind::Path => {
                    let pats: Result<Vec<PathPattern>, String> =
                        self.pats.iter().map(|p| PathPattern::parse(p)).collect();
                    pats.ok()
                        .map(|p| SetMatcher::Path(Box::new(PathSet::new(&p, false))))
                }
            })
            .as_ref()
    }
}

#[derive(Debug, Clone)]
enum SetMatcher {
    Regex(RegexSet),
    Glob(GlobSet),
    Path(Box<PathSet>),
}

/// A rule's necessary condition on a command view: its per-command
/// conditions can hold only if, for one of its `Need`s, some bit of `mask`
/// is set in word `word` of group `group`'s bits for that view. Worked out
/// once per rule from the first condition that has one: a `$command`,
/// `$command.args` or `$pipeline` regex, `contains`, glob or path leaf, or
/// an `any` of such (a `not` has none). The standard profile's Bash rules nearly all
/// start with one (`^(curl|wget|…)`), so one look at the view's set bits
/// settles most rules without walking their conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Need {
    group: u32,
    /// A `$pipeline` group: its bits are in the view's pipeline's block.
    pipeline: bool,
    /// The word's index in a scope's block (the group's offset + word).
    at: u32,
    mask: u64,
}

/// A leaf's patterns: `len` ids from `first` in group `group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    group: u32,
    first: u32,
    len: u32,
}

/// Per-evaluation results of [`CondSets`] groups, by (group, scope), where
/// the scope is the event (per-event fields), one view of one command
/// ([`CommandScope::key`]) or one pipeline ([`pipeline_scope`] for
/// `$pipeline`). Each scope that a leaf asked about holds one block of
/// words: a bit per group saying it was computed, then each group's
/// pattern bits at its offset ([`CondSets`] lays the block out). A lookup
/// is an index and a bit test: no hashing, and no allocation beyond the
/// scope's block the first time it is asked (the leaves of a decision are
/// looked up a few hundred times; a `HashMap` keyed by (group, scope) was
/// 15 % of the rules' instructions, docs/performance-history.md, #28). A split
/// command of thousands of simple commands has thousands of scopes: a
/// block each only when asked.
pub(crate) struct SetCache {
    /// Per command (segment): the ordinal of its first view's scope.
    view_base: Vec<u32>,
    /// The ordinal of pipeline 0's scope.
    pipeline_base: u32,
    blocks: RefCell<Blocks>,
}

#[derive(Default)]
struct Blocks {
    /// Scope ordinal → 1 + the offset of its block in `words` (0: none yet).
    at: Vec<u32>,
    words: Vec<u64>,
}

impl SetCache {
    /// An empty cache for one evaluation of a subject with `command` (its
    /// views and pipelines are the scopes).
    pub fn new(sets: &CondSets, command: Option<&ParsedCommand>) -> SetCache {
        let mut view_base = Vec::new();
        let mut next = 1u32;
        let mut pipelines = 0;
        if let Some(cmd) = command {
            view_base.reserve(cmd.segments.len());
            for seg in &cmd.segments {
                view_base.push(next);
                next += seg.views.len() as u32;
                pipelines = pipelines.max(seg.pipeline + 1);
            }
        }
        let scopes = next as usize + pipelines;
        SetCache {
            view_base,
            pipeline_base: next,
            blocks: RefCell::new(Blocks {
                at: vec![0; scopes],
                // Room for an ordinary command's scopes at once: a block is
                // a few hundred bytes; one of thousands of commands grows.
                words: Vec::with_capacity(
                    sets.event_stride + sets.command_stride * (scopes - 1).min(16),
                ),
            }),
        }
    }

    /// The scope's ordinal (see [`SetCache`]).
    fn ordinal(&self, scope: u64) -> usize {
        if scope == u64::MAX {
            0
        } else if scope & (1 << 62) != 0 {
            self.pipeline_base as usize + (scope & !(1 << 62)) as usize
        } else {
            self.view_base[(scope >> 32) as usize] as usize + (scope & 0xffff_ffff) as usize
        }
    }
}

/// The cache scope of `$pipeline` for pipeline `p`: its text is the same for
/// every command in it, so it is matched once per pipeline, not once per
/// command (which would cost the pipeline's length times its commands).
fn pipeline_scope(p: usize) -> u64 {
    (1 << 62) | p as u64
}

/// Call `f` on every leaf of `c`.
fn visit_leaves(c: &mut Cond, f: &mut impl FnMut(&str, &Field, &Op, &mut Option<Slot>)) {
    match c {
        Cond::Leaf {
            field,
            name,
            op,
            slot,
        } => f(name, field, op, slot),
        Cond::Not(c) => visit_leaves(c, f),
        Cond::Any(cs) | Cond::All(cs) => cs.iter_mut().for_each(|c| visit_leaves(c, f)),
    }
}

impl CondSets {
    /// Group the regex and glob leaves of `conds`, filling in their slots.
    /// Nothing is compiled here: each group is compiled the first time it is
    /// asked (see [`Group`]).
    pub fn build(conds: &mut [&mut Cond]) -> CondSets {
        // Pass 1: collect the patterns per (field, kind).
        let mut keys: HashMap<(String, Kind), usize> = HashMap::new();
        let mut pending: Vec<(Field, Kind, Vec<String>)> = Vec::new();
        let mut slots: Vec<Option<Slot>> = Vec::new();
        for c in conds.iter_mut() {
            visit_leaves(c, &mut |name, field, op, _| {
                let (kind, pats): (Kind, Vec<String>) = match op {
                    Op::Regex(rs) => (
                        Kind::Regex,
                        rs.iter().map(|r| r.as_str().to_string()).collect(),
                    ),
                    Op::Contains(texts) => (
                        Kind::Regex,
                        texts.iter().map(|t| regex::escape(t)).collect(),
                    ),
                    Op::Glob { src, .. } => (Kind::Glob, src.clone()),
                    Op::Path { src, .. } => (Kind::Path, src.clone()),
                    _ => {
                        slots.push(None);
                        return;
                    }
                };
                let key = (name.to_string(), kind);
                let mut g = *keys.entry(key.clone()).or_insert_with(|| {
                    pending.push((field.clone(), kind, Vec::new()));
                    pending.len() - 1
                });
                // A full regex chunk: the field's next patterns start another.
                let held = pending[g].2.len();
                if kind == Kind::Regex && held > 0 && held + pats.len() > REGEX_CHUNK {
                    pending.push((field.clone(), kind, Vec::new()));
                    g = pending.len() - 1;
                    keys.insert(key, g);
                }
                let first = pending[g].2.len() as u32;
                let len = pats.len() as u32;
                pending[g].2.extend(pats);
                slots.push(Some(Slot {
                    group: g as u32,
                    first,
                    len,
                }));
            });
        }
        // Pass 2: keep each group's patterns, to compile when first asked.
        let groups: Vec<Group> = pending
            .into_iter()
            .map(|(field, kind, pats)| Group {
                field,
                kind,
                pats: pats.into_iter().map(String::into_boxed_str).collect(),
                matcher: std::sync::OnceLock::new(),
            })
            .collect();
        // Pass 3: set the slots, in the same order as pass 1.
        let mut it = slots.into_iter();
        for c in conds.iter_mut() {
            visit_leaves(c, &mut |_, _, _, slot| *slot = it.next().flatten());
        }
        // A scope's block: one bit per group of its kind (computed yet),
        // then each such group's bits.
        let per_command = |g: &Group| g.field.per_command();
        let count = |command: bool| groups.iter().filter(|g| per_command(g) == command).count();
        let mut next_done = [0u32; 2];
        let mut stride = [count(false).div_ceil(64), count(true).div_ceil(64)];
        let (mut done, mut offsets) = (Vec::new(), Vec::new());
        for g in &groups {
            let kind = usize::from(per_command(g));
            done.push(next_done[kind]);
            next_done[kind] += 1;
            offsets.push(stride[kind] as u32);
            stride[kind] += g.pats.len().div_ceil(64);
        }
        CondSets {
            groups,
            done,
            offsets,
            event_stride: stride[0],
            command_stride: stride[1],
            need_words: Vec::new(),
        }
    }

    /// Index the needs of the rules judged only per command view: each
    /// (rule index, its needs, its events).
    pub fn index_needs<'r>(
        &mut self,
        rules: impl Iterator<Item = (u32, &'r [Need], super::rule::EventSet)>,
    ) {
        let mut words: Vec<NeedWord> = Vec::new();
        let mut lists: Vec<Vec<(u32, u64)>> = Vec::new();
        for (ri, needs, events) in rules {
            for n in needs {
                let i = match words
                    .iter()
                    .position(|w| w.pipeline == n.pipeline && w.at == n.at)
                {
                    Some(i) => i,
                    None => {
                        words.push(NeedWord {
                            group: n.group,
                            pipeline: n.pipeline,
                            at: n.at,
                            events: super::rule::EventSet::EMPTY,
                            rules: Box::new([]),
                        });
                        lists.push(Vec::new());
                        words.len() - 1
                    }
                };
                words[i].events.add(events);
                lists[i].push((ri, n.mask));
            }
        }
        for (w, list) in words.iter_mut().zip(lists) {
            w.rules = list.into_boxed_slice();
        }
        // In block order: a view's groups computed in the order they sit.
        words.sort_by_key(|w| (w.pipeline, w.at));
        self.need_words = words;
    }

    /// For each rule indexed by [`CondSets::index_needs`] whose events
    /// include `event_bit`: whether some view of `views` meets its needs,
    /// a bit per rule index (of `rules`). Computes the groups the needs
    /// read, once per view (per pipeline for `$pipeline`), as the rules'
    /// leaves would.
    pub fn needs_met_by(
        &self,
        views: &[ViewScope<'_>],
        cache: &SetCache,
        event_bit: u64,
        rules: usize,
    ) -> Vec<u64> {
        let mut met = vec![0u64; rules.div_ceil(64)];
        if views.is_empty() {
            return met;
        }
        let mut blocks = cache.blocks.borrow_mut();
        for w in self.need_words.iter().filter(|w| w.events.has(event_bit)) {
            let gi = w.group as usize;
            // A group that did not compile as a set: its leaves are matched
            // one by one, nothing is known here.
            let word = match self.groups[gi].matcher() {
                Some(matcher) => {
                    let mut word = 0;
                    for view in views {
                        let base = match (w.pipeline, view.env.command) {
                            (false, _) => view.block,
                            (true, Some(c)) => {
                                let scope = pipeline_scope(c.segment.pipeline);
                                self.block_base(&mut blocks, cache.ordinal(scope))
                            }
                            (true, None) => {
                                word = u64::MAX;
                                break;
                            }
                        };
                        let block = &mut blocks.words[base..base + self.command_stride];
                        self.group_bits(block, gi, matcher, &view.env);
                        word |= block[w.at as usize];
                    }
                    word
                }
                None => u64::MAX,
            };
            if word != 0 {
                for &(ri, mask) in w.rules.iter() {
                    if word & mask != 0 {
                        met[ri as usize / 64] |= 1 << (ri % 64);
                    }
                }
            }
        }
        met
    }

    /// Whether the leaf at `slot` holds, computing its group once per scope;
    /// `None` if the group does not compile as a set (match the leaf alone).
    fn hit(&self, slot: Slot, scope: u64, env: &Env<'_>, cache: &SetCache) -> Option<bool> {
        let gi = slot.group as usize;
        let matcher = self.groups[gi].matcher()?;
        let mut blocks = cache.blocks.borrow_mut();
        let block = self.block(&mut blocks, cache.ordinal(scope));
        let bits = self.group_bits(block, gi, matcher, env);
        Some(
            (slot.first..slot.first + slot.len).any(|b| bits[b as usize / 64] >> (b % 64) & 1 == 1),
        )
    }

    /// The block of the scope `ordinal`, zeroed the first time it is asked.
    fn block<'b>(&self, blocks: &'b mut Blocks, ordinal: usize) -> &'b mut [u64] {
        let base = self.block_base(blocks, ordinal);
        let stride = self.stride(ordinal);
        &mut blocks.words[base..base + stride]
    }

    /// Where the block of the scope `ordinal` starts in the cache's words.
    fn block_base(&self, blocks: &mut Blocks, ordinal: usize) -> usize {
        let Blocks { at, words } = blocks;
        match at[ordinal] {
            0 => {
                let base = words.len();
                words.resize(base + self.stride(ordinal), 0);
                at[ordinal] = base as u32 + 1;
                base
            }
            n => n as usize - 1,
        }
    }

    /// The size of the block of the scope `ordinal`: the event's, or a
    /// view's or pipeline's.
    fn stride(&self, ordinal: usize) -> usize {
        match ordinal {
            0 => self.event_stride,
            _ => self.command_stride,
        }
    }

    /// Group `gi`'s bits in `block`, computed the first time they are asked.
    fn group_bits<'b>(
        &self,
        block: &'b mut [u64],
        gi: usize,
        matcher: &SetMatcher,
        env: &Env<'_>,
    ) -> &'b [u64] {
        let g = &self.groups[gi];
        let offset = self.offsets[gi] as usize;
        let end = offset + g.pats.len().div_ceil(64);
        let done = self.done[gi] as usize;
        if block[done / 64] >> (done % 64) & 1 == 0 {
            block[done / 64] |= 1 << (done % 64);
            Self::compute(g, matcher, env, &mut block[offset..end]);
        }
        &block[offset..end]
    }

    /// What `conds` (all of them) need to hold on a command view: see
    /// [`Need`]. Empty when nothing is known.
    pub fn needs(&self, conds: &[Cond]) -> Box<[Need]> {
        let mut needs = conds
            .iter()
            .find_map(|c| self.need_of(c))
            .unwrap_or_default();
        // One test per word of a group (an `any` of five `$command` leaves
        // is one mask), in block order.
        needs.sort_unstable_by_key(|n| n.at);
        needs.dedup_by(|n, kept| {
            let same = n.at == kept.at;
            if same {
                kept.mask |= n.mask;
            }
            same
        });
        needs.into_boxed_slice()
    }

    /// Bits of view-scoped groups one of which `c` needs set to hold, if
    /// `c` cannot hold without them.
    fn need_of(&self, c: &Cond) -> Option<Vec<Need>> {
        match c {
            Cond::Leaf {
                field: field @ (Field::Command | Field::CommandArgs | Field::Pipeline),
                slot: Some(slot),
                ..
            } => {
                let pipeline = matches!(field, Field::Pipeline);
                let mut out: Vec<Need> = Vec::new();
                let offset = self.offsets[slot.group as usize];
                for b in slot.first..slot.first + slot.len {
                    let (at, bit) = (offset + b / 64, 1u64 << (b % 64));
                    match out.last_mut() {
                        Some(n) if n.at == at => n.mask |= bit,
                        _ => out.push(Need {
                            group: slot.group,
                            pipeline,
                            at,
                            mask: bit,
                        }),
                    }
                }
                (!out.is_empty()).then_some(out)
            }
            Cond::Any(cs) if !cs.is_empty() => {
                let mut out = Vec::new();
                for c in cs {
                    out.extend(self.need_of(c)?);
                }
                Some(out)
            }
            Cond::All(cs) => cs.iter().find_map(|c| self.need_of(c)),
            _ => None,
        }
    }

    /// One view of the command as evaluation judges it ([`ViewScope`]),
    /// its block in `cache` made ready.
    pub fn view_scope<'a>(&self, env: Env<'a>, cache: &SetCache) -> ViewScope<'a> {
        let key = env.command.map_or(u64::MAX, |c| c.key);
        let block = self.block_base(&mut cache.blocks.borrow_mut(), cache.ordinal(key));
        ViewScope { env, block }
    }

    /// Whether conditions that need `needs` may hold on `view` (false:
    /// they do not; true: judge them). Computes the groups it reads, once
    /// per view (per pipeline for `$pipeline`), as their leaves would.
    pub fn may_hold(&self, needs: &[Need], view: &ViewScope<'_>, cache: &SetCache) -> bool {
        needs.is_empty() || self.needs_met(needs, &mut cache.blocks.borrow_mut(), cache, view)
    }

    fn needs_met(
        &self,
        needs: &[Need],
        blocks: &mut Blocks,
        cache: &SetCache,
        view: &ViewScope<'_>,
    ) -> bool {
        // The view's pipeline's block, found when first needed.
        let mut pipeline_base = None;
        let env = &view.env;
        for n in needs {
            let base = match (n.pipeline, pipeline_base) {
                (false, _) => view.block,
                (true, Some(base)) => base,
                (true, None) => {
                    let Some(c) = env.command else {
                        return true;
                    };
                    let scope = pipeline_scope(c.segment.pipeline);
                    *pipeline_base.insert(self.block_base(blocks, cache.ordinal(scope)))
                }
            };
            let gi = n.group as usize;
            let done = self.done[gi] as usize;
            if blocks.words[base + done / 64] >> (done % 64) & 1 == 0 {
                let Some(matcher) = self.groups[gi].matcher() else {
                    // Its leaves are matched one by one: nothing known here.
                    return true;
                };
                let block = &mut blocks.words[base..base + self.command_stride];
                self.group_bits(block, gi, matcher, env);
            }
            if blocks.words[base + n.at as usize] & n.mask != 0 {
                return true;
            }
        }
        false
    }

    /// Match every pattern of a group against the field's value(s), setting
    /// the bits of those that match.
    fn compute(g: &Group, matcher: &SetMatcher, env: &Env<'_>, bits: &mut [u64]) {
        let mut set = |i: usize| bits[i / 64] |= 1 << (i % 64);
        let (mut ids, mut scratch) = (Vec::new(), Vec::new());
        // `shell`: the text is a shell word (`$command.args`), as
        // `Op::on_str` takes it.
        let mut add = |s: &str, shell: bool| match matcher {
            // Most sets match nothing: asked first whether any pattern
            // matches (a search that stops at the first match, a third of
            // an overlapping one), and only then which.
            SetMatcher::Regex(re) => {
                if re.is_match(s) {
                    re.matches(s).iter().for_each(&mut set);
                }
            }
            SetMatcher::Glob(globs) => {
                if globs.is_match(s) {
                    globs.matches(s).into_iter().for_each(&mut set);
                }
            }
            SetMatcher::Path(paths) => {
                // As `Op::on_str` does for a `path` leaf.
                if shell && s.starts_with('-') {
                    return;
                }
                let Some(abs) = resolve(s, &env.base, shell) else {
                    return;
                };
                let p = ResolvedPath::new(&abs, env.base.home, env.base.project);
                if !paths.is_match(&p) {
                    return;
                }
                ids.clear();
                paths.matches_into(&p, &mut scratch, &mut ids);
                ids.iter().for_each(|&i| set(i));
            }
        };
        match &g.field {
            Field::Input(path) => {
                if let Some(v) = lookup_field(env, path) {
                    if g.kind == Kind::Path {
                        // A path is only ever a string (`Op::on_json`).
                        each_str(v, &mut |s| add(s, false));
                    } else {
                        each_text(v, &mut |s| add(s, false));
                    }
                }
            }
            Field::Path => {
                if let Some(t) = env.target {
                    add(t, false);
                }
            }
            Field::Signal(name) => {
                if let Some(v) = env.signals.and_then(|x| x.get(name)) {
                    add(v, false);
                }
            }
            Field::Command => {
                if let Some(c) = env.command {
                    add(&c.view.text, false);
                }
            }
            Field::CommandArgs => {
                if let Some(c) = env.command {
                    c.segment
                        .words
                        .get(c.view.start + 1..)
                        .unwrap_or_default()
                        .iter()
                        .for_each(|a| add(a, true));
                }
            }
            Field::Pipeline => {
                if let Some(c) = env.command {
                    add(c.parsed.pipeline_text(c.segment.pipeline), false);
                }
            }
        }
    }
}

/// The strings of a JSON value, through arrays: what a `path` leaf reads.
fn each_str(v: &Value, add: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => add(s),
        Value::Array(items) => items.iter().for_each(|i| each_str(i, add)),
        _ => {}
    }
}

/// The texts `glob`/`regex` compare for a JSON value (see [`Op::on_json`]).
fn each_text(v: &Value, add: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => add(s),
        Value::Bool(b) => add(if *b { "true" } else { "false" }),
        Value::Number(n) => add(&n.to_string()),
        Value::Array(items) => items.iter().for_each(|i| each_text(i, add)),
        Value::Null | Value::Object(_) => {}
    }
}

impl Cond {
    /// Whether any leaf looks at a per-command field.
    pub fn per_command(&self) -> bool {
        match self {
            Cond::Leaf { field, .. } => field.per_command(),
            Cond::Not(c) => c.per_command(),
            Cond::Any(cs) | Cond::All(cs) => cs.iter().any(Cond::per_command),
        }
    }

    /// Evaluate.
    pub fn holds(&self, env: &Env<'_>) -> bool {
        match self {
            Cond::Leaf {
                field, op, slot, ..
            } => match (slot, env.sets) {
                (Some(slot), Some((sets, cache))) => {
                    let scope = if field.per_command() {
                        match env.command {
                            Some(c) if matches!(field, Field::Pipeline) => {
                                pipeline_scope(c.segment.pipeline)
                            }
                            Some(c) => c.key,
                            None => return op.on_missing(),
                        }
                    } else {
                        u64::MAX
                    };
                    sets.hit(*slot, scope, env, cache)
                        .unwrap_or_else(|| leaf(field, op, env))
                }
                _ => leaf(field, op, env),
            },
            Cond::Not(c) => !c.holds(env),
            Cond::Any(cs) => cs.iter().any(|c| c.holds(env)),
            Cond::All(cs) => cs.iter().all(|c| c.holds(env)),
        }
    }

    /// A one-line description for explanations.
    pub fn describe(&self) -> String {
        match self {
            Cond::Leaf { name, op, .. } => format!("`{name}` {}", op.describe()),
            Cond::Not(c) => format!("not ({})", c.describe()),
            Cond::Any(cs) => format!(
                "any of ({})",
                cs.iter().map(Cond::describe).collect::<Vec<_>>().join("; ")
            ),
            Cond::All(cs) => format!(
                "all of ({})",
                cs.iter().map(Cond::describe).collect::<Vec<_>>().join("; ")
            ),
        }
    }

    /// The value(s) a leaf saw, for explanations; `None` for combinators.
    pub fn observed(&self, env: &Env<'_>) -> Option<String> {
        let Cond::Leaf { field, .. } = self else {
            return None;
        };
        let shown = match field {
            Field::Input(path) => lookup(env.input, path).map(|v| match v {
                Value::String(s) => format!("{s:?}"),
                v => v.to_string(),
            }),
            Field::Command => env.command.map(|c| format!("{:?}", c.view.text)),
            Field::CommandArgs => env.command.map(|c| {
                format!(
                    "{:?}",
                    c.segment.words.get(c.view.start + 1..).unwrap_or_default()
                )
            }),
            Field::Pipeline => env
                .command
                .map(|c| format!("{:?}", c.parsed.pipeline_text(c.segment.pipeline))),
            Field::Path => env.target.map(|t| format!("{t:?}")),
            Field::Signal(name) => env
                .signals
                .and_then(|x| x.get(name))
                .map(|v| format!("{v:?}")),
        };
        Some(truncate(
            shown.unwrap_or_else(|| "(absent)".to_string()),
            120,
        ))
    }
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

impl Op {
    fn describe(&self) -> String {
        fn list<T: std::fmt::Display>(items: &[T], quote: bool) -> String {
            let shown: Vec<String> = items
                .iter()
                .map(|i| {
                    if quote {
                        format!("`{i}`")
                    } else {
                        i.to_string()
                    }
                })
                .collect();
            if shown.len() == 1 {
                shown[0].clone()
            } else {
                format!("[{}]", shown.join(", "))
            }
        }
        match self {
            Op::Equals(v) => format!("equals {}", list(v, false)),
            Op::Glob { src, .. } => format!("glob {}", list(src, true)),
            Op::Regex(r) => format!(
                "regex {}",
                list(
                    &r.iter().map(|r| r.as_str().to_string()).collect::<Vec<_>>(),
                    true
                )
            ),
            Op::Contains(v) => format!("contains {}", list(v, true)),
            Op::Path { src, .. } => format!("path {}", list(src, true)),
            Op::Exists(b) => format!("exists = {b}"),
        }
    }

    fn on_missing(&self) -> bool {
        matches!(self, Op::Exists(false))
    }

    fn on_str(&self, s: &str, env: &Env<'_>, shell_word: bool) -> bool {
        match self {
            Op::Equals(v) => v.iter().any(|x| matches!(x, Scalar::Str(t) if t == s)),
            Op::Glob { set, .. } => set.is_match(s),
            Op::Regex(rs) => rs.iter().any(|r| r.is_match(s)),
            Op::Contains(v) => v.iter().any(|t| s.contains(t.as_str())),
            Op::Path { set, .. } => {
                // An option word (`-rf`, `--oneline`) names no path; skipping it
                // saves resolving most arguments of most commands.
                if shell_word && s.starts_with('-') {
                    return false;
                }
                let Some(abs) = resolve(s, &env.base, shell_word) else {
                    return false;
                };
                set.is_match(&ResolvedPath::new(&abs, env.base.home, env.base.project))
            }
            Op::Exists(b) => *b,
        }
    }

    fn on_json(&self, v: &Value, env: &Env<'_>) -> bool {
        match v {
            Value::Null => self.on_missing(),
            Value::String(s) => self.on_str(s, env, false),
            Value::Array(items) => match self {
                Op::Exists(b) => *b,
                _ => items.iter().any(|i| self.on_json(i, env)),
            },
            Value::Object(_) => matches!(self, Op::Exists(true)),
            Value::Bool(b) => match self {
                Op::Equals(v) => v.iter().any(|x| match x {
                    Scalar::Bool(t) => t == b,
                    Scalar::Str(t) => t == if *b { "true" } else { "false" },
                    _ => false,
                }),
                Op::Path { .. } => false,
                _ => self.on_str(if *b { "true" } else { "false" }, env, false),
            },
            Value::Number(n) => match self {
                Op::Equals(v) => v.iter().any(|x| match x {
                    Scalar::Int(i) => n.as_i64() == Some(*i) || n.as_f64() == Some(*i as f64),
                    Scalar::Float(f) => n.as_f64() == Some(*f),
                    Scalar::Str(t) => *t == n.to_string(),
                    Scalar::Bool(_) => false,
                }),
                Op::Path { .. } => false,
                _ => self.on_str(&n.to_string(), env, false),
            },
        }
    }
}

fn leaf(field: &Field, op: &Op, env: &Env<'_>) -> bool {
    match field {
        Field::Input(path) => match lookup_field(env, path) {
            Some(v) => op.on_json(v, env),
            None => op.on_missing(),
        },
        Field::Path => match env.target {
            Some(t) => op.on_str(t, env, false),
            None => op.on_missing(),
        },
        Field::Signal(name) => match env.signals.and_then(|x| x.get(name)) {
            Some(v) => op.on_str(v, env, false),
            None => op.on_missing(),
        },
        Field::Command => match env.command {
            Some(c) => op.on_str(&c.view.text, env, false),
            None => op.on_missing(),
        },
        Field::CommandArgs => match env.command {
            Some(c) => match op {
                Op::Exists(b) => *b,
                // An empty command (`""`, or one too large to split) has no
                // words, not even a program.
                _ => c
                    .segment
                    .words
                    .get(c.view.start + 1..)
                    .unwrap_or_default()
                    .iter()
                    .any(|a| op.on_str(a, env, true)),
            },
            None => op.on_missing(),
        },
        Field::Pipeline => match env.command {
            Some(c) => op.on_str(c.parsed.pipeline_text(c.segment.pipeline), env, false),
            None => op.on_missing(),
        },
    }
}

/// [`lookup`] of a field of the input, from the subject's `tool_input` for
/// `tool_input.…` (one search of the input's members fewer per field: a
/// Bash hook's toolless rules read a dozen `tool_input` fields).
fn lookup_field<'v>(env: &Env<'v>, path: &[String]) -> Option<&'v Value> {
    match (path.split_first(), env.tool_input) {
        (Some((first, rest)), Some(tool_input)) if first == "tool_input" => {
            lookup(tool_input, rest)
        }
        _ => lookup(env.input, path),
    }
}

/// Follow a dotted path; numeric parts index arrays (or name object keys).
pub(crate) fn lookup<'v>(mut v: &'v Value, path: &[String]) -> Option<&'v Value> {
    for part in path {
        v = match v {
            Value::Object(m) => m.get(part.as_str())?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    (!v.is_null()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn leaf_cond(field: &str, op: Op) -> Cond {
        Cond::Leaf {
            field: Field::parse(field).unwrap(),
            name: field.to_string(),
            op: Box::new(op),
            slot: None,
        }
    }

    fn env(input: &Value) -> Env<'_> {
        Env {
            input,
            tool_input: None,
            base: Base {
                cwd: Some("/p"),
                home: Some("/h"),
                project: Some("/p"),
            },
            target: None,
            command: None,
            sets: None,
            signals: None,
        }
    }

    #[test]
    fn operators_on_json() {
        let input = json!({
            "cwd": "/p",
            "n": 5,
            "b": true,
            "list": ["a", "bc"],
            "nested": {"x": {"y": "deep"}},
            "arr": [{"k": "v"}],
            "nul": null
        });
        let e = env(&input);
        let re = |s: &str| Op::Regex(vec![LazyRegex::new(s).unwrap()]);
        let table: Vec<(Cond, bool)> = vec![
            (
                leaf_cond("cwd", Op::Equals(vec![Scalar::Str("/p".into())])),
                true,
            ),
            (leaf_cond("n", Op::Equals(vec![Scalar::Int(5)])), true),
            (leaf_cond("n", Op::Equals(vec![Scalar::Float(5.0)])), true),
            (
                leaf_cond("n", Op::Equals(vec![Scalar::Str("5".into())])),
                true,
            ),
            (leaf_cond("b", Op::Equals(vec![Scalar::Bool(true)])), true),
            (leaf_cond("b", Op::Equals(vec![Scalar::Bool(false)])), false),
            (leaf_cond("list", Op::Contains(vec!["c".into()])), true),
            (
                leaf_cond("list", Op::Equals(vec![Scalar::Str("a".into())])),
                true,
            ),
            (leaf_cond("nested.x.y", re("^de")), true),
            (
                leaf_cond("arr.0.k", Op::Equals(vec![Scalar::Str("v".into())])),
                true,
            ),
            (leaf_cond("arr.1.k", Op::Exists(false)), true),
            (leaf_cond("nul", Op::Exists(false)), true),
            (leaf_cond("missing", re(".*")), false),
            (Cond::Not(Box::new(leaf_cond("missing", re(".*")))), true),
            (leaf_cond("nested", Op::Exists(true)), true),
            (leaf_cond("n", re("^5$")), true),
            (
                Cond::Any(vec![
                    leaf_cond("missing", Op::Exists(true)),
                    leaf_cond("b", Op::Exists(true)),
                ]),
                true,
            ),
            (
                Cond::All(vec![
                    leaf_cond("missing", Op::Exists(true)),
                    leaf_cond("b", Op::Exists(true)),
                ]),
                false,
            ),
        ];
        for (c, want) in table {
            assert_eq!(c.holds(&e), want, "{}", c.describe());
        }
    }

    #[test]
    fn grouped_sets_agree_with_single_matching() {
        let re = |s: &[&str]| Op::Regex(s.iter().map(|p| LazyRegex::new(p).unwrap()).collect());
        let glob = |s: &[&str]| {
            let mut b = GlobSetBuilder::new();
            s.iter().for_each(|p| {
                b.add(string_glob(p).unwrap());
            });
            Op::Glob {
                set: b.build().unwrap(),
                src: s.iter().map(|p| p.to_string()).collect(),
            }
        };
        let path = |s: &[&str]| {
            let pats: Vec<PathPattern> = s.iter().map(|p| PathPattern::parse(p).unwrap()).collect();
            Op::Path {
                set: Box::new(PathSet::new(&pats, false)),
                src: s.iter().map(|p| p.to_string()).collect(),
            }
        };
        let mut conds = [
            leaf_cond("a", re(&["^x", "y$"])),
            leaf_cond("a", re(&["^z"])),
            leaf_cond("n", re(&["^4"])),
            Cond::Not(Box::new(leaf_cond("list", re(&["b"])))),
            leaf_cond("missing", re(&["."])),
            leaf_cond("p", glob(&["/home/*/x", "/tmp/**"])),
            leaf_cond("list", glob(&["a*"])),
            // Path leaves: resolved against cwd /p, home /h, project /p.
            leaf_cond("p", path(&["//tmp/**", "~/x"])),
            leaf_cond("p", path(&["/q", "*.rs"])),
            leaf_cond("list", path(&["~", "//etc/**"])),
        ];
        let inputs = [
            json!({"a": "xa", "n": 42, "list": ["ab", "c"], "p": "/tmp/q/r"}),
            json!({"a": "zzy", "n": 5, "list": [], "p": "/h/x"}),
            json!({"a": ["q", "ry"], "n": "4", "list": "b", "p": "q"}),
            json!({"a": null, "n": true, "list": [["~"], 4, "/etc/x"], "p": 3}),
            json!({"a": "x", "n": 4, "list": ["/h/../h"], "p": ["/p/src/m.rs", true]}),
        ];
        let plain: Vec<Vec<bool>> = inputs
            .iter()
            .map(|i| conds.iter().map(|c| c.holds(&env(i))).collect())
            .collect();
        let mut refs: Vec<&mut Cond> = conds.iter_mut().collect();
        let sets = CondSets::build(&mut refs);
        assert_eq!(sets.groups.len(), 8);
        // Compiled when first asked, not when built: a leaf on `n` alone
        // compiles `n`'s group and no other.
        let compiled = |sets: &CondSets| {
            sets.groups
                .iter()
                .map(|g| g.matcher.get().is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(compiled(&sets), [false; 8]);
        let cache = SetCache::new(&sets, None);
        let e = Env {
            sets: Some((&sets, &cache)),
            ..env(&inputs[0])
        };
        assert!(conds[2].holds(&e));
        assert_eq!(
            compiled(&sets),
            [false, true, false, false, false, false, false, false]
        );
        for (i, input) in inputs.iter().enumerate() {
            let cache = SetCache::new(&sets, None);
            let e = Env {
                sets: Some((&sets, &cache)),
                ..env(input)
            };
            let grouped: Vec<bool> = conds.iter().map(|c| c.holds(&e)).collect();
            assert_eq!(grouped, plain[i], "input {input}");
        }
        // Each path leaf matched some input and missed another.
        for leaf in 7..10 {
            let col: Vec<bool> = plain.iter().map(|row| row[leaf]).collect();
            assert!(
                col.contains(&true) && col.contains(&false),
                "leaf {leaf}: {col:?}"
            );
        }
    }

    #[test]
    fn regex_groups_are_chunked_and_agree_with_single_matching() {
        // Fifty leaves on one field: three sets of up to REGEX_CHUNK, and a
        // leaf of thirty patterns (more than a chunk) in a set of its own.
        let pats: Vec<String> = (0..50).map(|i| format!("^x{i}y")).collect();
        let mut conds: Vec<Cond> = pats
            .iter()
            .map(|p| leaf_cond("a", Op::Regex(vec![LazyRegex::new(p).unwrap()])))
            .collect();
        let big: Vec<LazyRegex> = (0..30)
            .map(|i| LazyRegex::new(&format!("^z{i}$")).unwrap())
            .collect();
        conds.push(leaf_cond("a", Op::Regex(big)));
        let inputs: Vec<Value> = ["x0y", "x23y", "x24y", "x49y", "x50y", "z29", "z30", "q"]
            .iter()
            .map(|a| json!({ "a": a }))
            .collect();
        let plain: Vec<Vec<bool>> = inputs
            .iter()
            .map(|i| conds.iter().map(|c| c.holds(&env(i))).collect())
            .collect();
        let mut refs: Vec<&mut Cond> = conds.iter_mut().collect();
        let sets = CondSets::build(&mut refs);
        let lens: Vec<usize> = sets.groups.iter().map(|g| g.pats.len()).collect();
        assert_eq!(lens, [REGEX_CHUNK, REGEX_CHUNK, 50 - 2 * REGEX_CHUNK, 30]);
        for (i, input) in inputs.iter().enumerate() {
            let cache = SetCache::new(&sets, None);
            let e = Env {
                sets: Some((&sets, &cache)),
                ..env(input)
            };
            let grouped: Vec<bool> = conds.iter().map(|c| c.holds(&e)).collect();
            assert_eq!(grouped, plain[i], "input {input}");
            assert_eq!(
                grouped.iter().filter(|h| **h).count(),
                usize::from(i < 4 || i == 5)
            );
        }
    }

    #[test]
    fn fields() {
        assert!(Field::parse("tool_input.command").is_ok());
        assert!(Field::parse("$command").unwrap().per_command());
        assert!(!Field::parse("$path").unwrap().per_command());
        assert!(Field::parse("$nope").is_err());
        assert!(Field::parse("a..b").is_err());
        assert!(Field::parse("").is_err());
    }
}
