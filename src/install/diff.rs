//! A unified diff of two texts, line by line, for `--dry-run`.

use std::fmt::Write as _;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// Above this many lines × lines in the changed middle, the middle is shown
/// as replaced wholesale instead of computing a minimal diff (settings files
/// are small; this only bounds memory on a pathological input).
const MAX_TABLE: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Same,
    Del,
    Add,
}

/// `diff -u`-style output (`---`/`+++` headers, `@@ -a,b +c,d @@` hunks);
/// empty when the texts are equal.
pub fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = script(&a, &b);

    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    // Positions (in a and b) of every op, to cut hunks.
    let mut pos = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0, 0);
    for op in &ops {
        pos.push((i, j));
        match op {
            Op::Same => {
                i += 1;
                j += 1;
            }
            Op::Del => i += 1,
            Op::Add => j += 1,
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Same).collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        // Merge changes whose contexts touch.
        while k + 1 < changed.len() && changed[k + 1] <= end + 2 * CONTEXT + 1 {
            k += 1;
            end = changed[k];
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (a0, b0) = pos[start];
        let count = |op: Op| ops[start..end].iter().filter(|o| **o == op).count();
        let a_len = count(Op::Same) + count(Op::Del);
        let b_len = count(Op::Same) + count(Op::Add);
        let from = |first: usize, len: usize| if len == 0 { first } else { first + 1 };
        let _ = writeln!(
            out,
            "@@ -{},{a_len} +{},{b_len} @@",
            from(a0, a_len),
            from(b0, b_len)
        );
        for (op, &(ai, bj)) in ops[start..end].iter().zip(&pos[start..end]) {
            let (mark, line) = match op {
                Op::Same => (' ', a[ai]),
                Op::Del => ('-', a[ai]),
                Op::Add => ('+', b[bj]),
            };
            out.push(mark);
            out.push_str(line.trim_end_matches(['\n', '\r']));
            out.push('\n');
            if !line.ends_with('\n') {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        k += 1;
    }
    out
}

/// The edit script: common prefix and suffix, and a longest-common-
/// subsequence diff of the middle.
fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops = vec![Op::Same; prefix];
    if am.len().saturating_mul(bm.len()) > MAX_TABLE {
        ops.extend(std::iter::repeat_n(Op::Del, am.len()));
        ops.extend(std::iter::repeat_n(Op::Add, bm.len()));
    } else {
        // lcs[i][j]: LCS length of am[i..] and bm[j..].
        let w = bm.len() + 1;
        let mut lcs = vec![0u32; (am.len() + 1) * w];
        for i in (0..am.len()).rev() {
            for j in (0..bm.len()).rev() {
                lcs[i * w + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < am.len() || j < bm.len() {
            if i < am.len() && j < bm.len() && am[i] == bm[j] {
                ops.push(Op::Same);
                i += 1;
                j += 1;
            } else if i < am.len() && (j == bm.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])
            {
                ops.push(Op::Del);
                i += 1;
            } else {
                ops.push(Op::Add);
                j += 1;
            }
        }
    }
    ops.extend(std::iter::repeat_n(Op::Same, suffix));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_give_nothing() {
        assert_eq!(unified("a\n", "a\n", "x", "y"), "");
    }

    #[test]
    fn one_hunk_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n";
        assert_eq!(
            unified(old, new, "a/s.json", "b/s.json"),
            "--- a/s.json\n+++ b/s.json\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn from_nothing_and_far_apart_changes() {
        assert_eq!(
            unified("", "{}\n", "/dev/null", "b"),
            "--- /dev/null\n+++ b\n@@ -0,0 +1,1 @@\n+{}\n"
        );
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new: String = (1..=20)
            .map(|n| match n {
                2 => "two\n".to_string(),
                19 => "nineteen\n".to_string(),
                n => format!("{n}\n"),
            })
            .collect();
        let diff = unified(&old, &new, "a", "b");
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
        assert!(!diff.contains("No newline"));
        let diff = unified("a", "b", "a", "b");
        assert!(
            diff.contains("-a\n\\ No newline at end of file\n+b\n"),
            "{diff}"
        );
    }
}
