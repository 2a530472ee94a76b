//! Checks the fuzz targets share.

use hookpoint::diagnostic::Diagnostic;

/// Whether a reported position lies inside `bytes`: a 1-based line that exists and a column on
/// it, at most one past its last character; or no position at all.
pub fn position_is_inside(bytes: &[u8], line: Option<usize>, column: Option<usize>) -> bool {
    match (line, column) {
        (None, None) => true,
        (Some(line), Some(column)) => {
            let text = String::from_utf8_lossy(bytes);
            line >= 1
                && text
                    .split('\n')
                    .nth(line - 1)
                    .is_some_and(|l| column >= 1 && column <= l.chars().count() + 1)
        }
        _ => false,
    }
}

/// Panics unless `problem` has a message and a position inside `bytes`.
pub fn assert_reported_inside(bytes: &[u8], problem: &Diagnostic) {
    assert!(!problem.message.is_empty(), "an empty message");
    assert!(
        position_is_inside(bytes, problem.line, problem.column),
        "position {:?}:{:?} outside the input: {problem}",
        problem.line,
        problem.column
    );
}

/// The `line L, column C` a message ends its position with (`... at line 3, column 7`), if any.
pub fn line_column_in(message: &str) -> Option<(usize, usize)> {
    let (_, at) = message.rsplit_once(" at line ")?;
    let (line, column) = at.split_once(", column ")?;
    let column: String = column.chars().take_while(char::is_ascii_digit).collect();
    Some((line.parse().ok()?, column.parse().ok()?))
}
