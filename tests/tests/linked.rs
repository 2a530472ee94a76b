//! Linking: this test binary names the extension-only crate with `hookpoint::link!`,
//! so its extensions are present (the `linking` binary checks the opposite).

hookpoint::link!(hookpoint_plugin_linkcheck);

use hookpoint::call_sync;

#[test]
fn link_macro_makes_extension_only_crate_present() {
    hookpoint::assert_linked(&[("linkcheck_probe", "linkcheck_probe_ext")]).unwrap();
    hookpoint::assert_crates_linked(&["hookpoint-plugin-linkcheck"]).unwrap();
    assert!(hookpoint::linked_crates().contains("hookpoint-plugin-linkcheck"));
}

#[test]
fn linked_crate_extension_runs_and_is_attributed_to_its_crate() {
    let mut n = 0u32;
    call_sync("linkcheck_probe", &mut n).unwrap();
    assert_eq!(n, 1);
    let points = hookpoint::introspect();
    let p = points
        .iter()
        .find(|p| p.name == "linkcheck_probe")
        .expect("listed");
    assert_eq!(p.extensions.len(), 1);
    assert_eq!(p.extensions[0].name, "linkcheck_probe_ext");
    assert!(
        p.extensions[0]
            .origin
            .to_string()
            .starts_with("hookpoint-plugin-linkcheck, plugins/linkcheck/src/lib.rs:"),
        "{}",
        p.extensions[0].origin
    );
    hookpoint::validate().unwrap();
}
