//! Linking: `hookpoint-plugin-linkcheck` is a dev-dependency of this package, but this
//! test binary never names it, so rustc does not link it and its extension is absent. The
//! `linked` test binary names it with `hookpoint::link!` and sees it.

use hookpoint::{ErrorKind, call_sync, extension};

#[extension(point = "linking_own_point")]
fn own_extension(n: &mut u32) {
    *n += 1;
}

#[test]
fn extension_crate_never_named_by_the_binary_is_absent() {
    let mut n = 0u32;
    call_sync("linkcheck_probe", &mut n).unwrap();
    assert_eq!(n, 0, "the unlinked crate's extension must not run");
    assert!(!hookpoint::linked_crates().contains("hookpoint-plugin-linkcheck"));
    assert!(
        !hookpoint::introspect()
            .iter()
            .any(|p| p.name == "linkcheck_probe" && !p.extensions.is_empty())
    );
}

#[test]
fn assert_linked_reports_missing_extension_and_tells_to_use_link_macro() {
    let err = hookpoint::assert_linked(&[("linkcheck_probe", "linkcheck_probe_ext")]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotLinked);
    let text = err.to_string();
    assert!(
        text.contains("`linkcheck_probe_ext` on `linkcheck_probe`"),
        "{text}"
    );
    assert!(text.contains("hookpoint::link!"), "{text}");
    // Extensions defined in the binary itself are present.
    hookpoint::assert_linked(&[("linking_own_point", "own_extension")]).unwrap();
}

#[test]
fn assert_crates_linked_reports_the_absent_package() {
    let err = hookpoint::assert_crates_linked(&["hookpoint-tests", "hookpoint-plugin-linkcheck"])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotLinked);
    let text = err.to_string();
    assert!(text.contains("hookpoint-plugin-linkcheck"), "{text}");
    assert!(
        !text.contains("hookpoint-tests"),
        "the linked package is not reported: {text}"
    );
    assert!(text.contains("hookpoint::link!"), "{text}");
    hookpoint::assert_crates_linked(&["hookpoint-tests"]).unwrap();
}
