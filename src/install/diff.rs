//! A unified diff of two texts, line by line, for `--dry-run`: the
//! `similar` crate's Myers diff (linear memory, so no input needs a cap), in
//! `diff -u`'s format.

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// `diff -u`-style output (`---`/`+++` headers, `@@ -a,b +c,d @@` hunks, `\
/// No newline at end of file`); empty when the texts are equal.
pub fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT)
        .missing_newline_hint(true)
        .header(old_name, new_name)
        .to_string()
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
            "--- /dev/null\n+++ b\n@@ -0,0 +1 @@\n+{}\n"
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
