//! Point names are global to the binary: two declarations of one name with different payload
//! types (two crates that picked the same name) are one point, and `validate` names both places.
//! A test binary of its own, since its registry holds the conflict.

mod numbers {
    hookpoint::point! {
        /// Counts.
        pub static COUNT: SyncPoint<u32> = "conflicting_points_shared_name";
    }
}

mod words {
    hookpoint::point! {
        /// Words, under the same name.
        pub static WORDS: SyncPoint<String> = "conflicting_points_shared_name";
    }
}

#[test]
fn a_point_name_declared_twice_with_another_payload_is_reported_with_both_places() {
    let _ = (&numbers::COUNT, &words::WORDS);
    let report = hookpoint::validate().expect_err("the two declarations conflict");
    let found: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|p| p.point.as_deref() == Some("conflicting_points_shared_name"))
        .collect();
    assert_eq!(found.len(), 1, "{report}");
    let p = found[0];
    assert_eq!(
        p.code,
        hookpoint::diagnostic::Code::RegistryConflictingDeclaration
    );
    let text = p.to_string();
    assert!(
        text.contains("`u32`") && text.contains("String") && text.contains("conflicting_points.rs"),
        "{text}"
    );
    assert_eq!(
        text.matches("conflicting_points.rs:").count(),
        2,
        "both places: {text}"
    );
}
