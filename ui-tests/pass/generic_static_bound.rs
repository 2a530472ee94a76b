//! A generic `#[extensible]` fn with `T: 'static`, bound inline or in a `where` clause.
use hookpoint::extensible;

#[extensible]
pub fn describe<T: std::fmt::Debug + 'static>(value: T) -> String {
    format!("{value:?}")
}

#[extensible]
pub fn first<T>(items: Vec<T>) -> Option<T>
where
    T: 'static,
{
    items.into_iter().next()
}

fn main() {
    assert_eq!(describe(42), "42");
    assert_eq!(first(vec!["a", "b"]), Some("a"));
}
