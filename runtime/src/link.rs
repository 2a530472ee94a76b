//! Making sure extension-only crates are linked, and checking that they were.

use std::collections::BTreeSet;

use crate::error::{Error, ErrorKind};
use crate::registry::HOOKPOINT_EXT_V0;

/// Links crates that only contribute extensions.
///
/// rustc passes a dependency to the linker only if the binary names something in it; a plugin
/// crate listed in `Cargo.toml` but never named loses all its extensions, silently, in every
/// build profile. `hookpoint::link!(a, b)` names each crate (it expands to `use a as _;`), which
/// is enough. Put it once in the binary (e.g. `main.rs`) or in a test.
///
/// ```
/// hookpoint::link!(hookpoint); // any crate name; usually your plugin crates
/// ```
#[macro_export]
macro_rules! link {
    ($($krate:ident),* $(,)?) => {
        $(
            #[allow(unused_imports)]
            use $krate as _;
        )*
    };
}

/// Checks that every `(point, extension name)` pair is present in the binary.
///
/// # Errors
/// [`ErrorKind::NotLinked`] listing every missing pair and the crates that are linked, so a
/// forgotten [`link!`] shows at start-up or in a test instead of as silently missing behaviour.
///
/// ```
/// #[hookpoint::extension(point = "doc_linked")]
/// fn present(_: &mut u32) {}
///
/// hookpoint::assert_linked(&[("doc_linked", "present")]).unwrap();
/// let err = hookpoint::assert_linked(&[("doc_linked", "presant")]).unwrap_err();
/// assert!(err.to_string().contains("`presant` on `doc_linked` (it has `present`: a typo?)"));
/// ```
pub fn assert_linked(expected: &[(&str, &str)]) -> Result<(), Error> {
    let missing: Vec<String> = expected
        .iter()
        .filter(|(p, n)| {
            !HOOKPOINT_EXT_V0
                .iter()
                .any(|e| e.point.name() == *p && e.name == *n)
        })
        .map(|(p, n)| missing_pair(p, n))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::kind_msg(
        ErrorKind::NotLinked,
        format!(
            "missing extension(s): {}. Linked crates with extensions: {}. A crate that only contributes extensions must be named by the binary: add `hookpoint::link!(crate_name);`",
            missing.join(", "),
            linked_crates().into_iter().collect::<Vec<_>>().join(", ")
        ),
    ))
}

/// One missing `(point, name)` pair, with the names the point does have (a wrong name is as
/// likely as a missing `link!`): the nearest one, else up to five.
fn missing_pair(point: &str, name: &str) -> String {
    let mut there: Vec<&str> = HOOKPOINT_EXT_V0
        .iter()
        .filter(|e| e.point.name() == point)
        .map(|e| e.name)
        .collect();
    there.sort_unstable();
    if let Some(near) = crate::suggest::nearest(name, there.iter().copied()) {
        return format!("`{name}` on `{point}` (it has `{near}`: a typo?)");
    }
    match there.len() {
        0 => format!("`{name}` on `{point}`"),
        n => format!(
            "`{name}` on `{point}` (it has {}{})",
            there[..n.min(5)].join(", "),
            if n > 5 { ", …" } else { "" }
        ),
    }
}

/// Checks that each named package (as in its `Cargo.toml`, e.g. `"hookpoint-plugin-memory"`)
/// contributed at least one extension to the binary.
///
/// # Errors
/// [`ErrorKind::NotLinked`] naming the absent packages.
///
/// ```
/// # #[hookpoint::extension(point = "doc_crates")]
/// # fn any(_: &mut u32) {}
/// hookpoint::assert_crates_linked(&["hookpoint"]).unwrap();
/// ```
pub fn assert_crates_linked(packages: &[&str]) -> Result<(), Error> {
    let linked = linked_crates();
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| !linked.contains(p))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::kind_msg(
        ErrorKind::NotLinked,
        format!(
            "no extensions from: {}. Add `hookpoint::link!(...)` naming these crates in the binary",
            missing.join(", ")
        ),
    ))
}

/// The packages that contributed compiled-in extensions.
pub fn linked_crates() -> BTreeSet<&'static str> {
    HOOKPOINT_EXT_V0.iter().map(|e| e.crate_name).collect()
}
