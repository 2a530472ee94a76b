//! Secrets masking, differential: masking a stream chunk by chunk equals masking the whole text,
//! and no secret value is left in the output.
//!
//! Input: a seed byte (the chunk size), then secret values separated by tabs, a newline, and the
//! text.
#![no_main]

use hookpoint_extensions::secrets::{SecretStore, placeholder};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&seed, rest)) = input.split_first() else {
        return;
    };
    let rest = String::from_utf8_lossy(rest);
    let (head, text) = rest.split_once('\n').unwrap_or(("", &rest));
    let pairs: Vec<(String, String)> = head
        .split('\t')
        .filter(|v| !v.is_empty() && !v.contains('\0'))
        .take(4)
        .enumerate()
        .map(|(i, v)| (format!("S{i}"), v.to_owned()))
        .collect();
    let secrets = SecretStore::from_pairs(pairs.clone());
    let whole = secrets.mask(text).into_owned();
    let size = usize::from(seed % 13) + 1;
    let mut streamed = String::new();
    let mut held = String::new();
    let mut from = 0;
    while from < text.len() {
        let mut to = (from + size).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        let mut chunk = text[from..to].to_owned();
        secrets.mask_stream(&mut held, &mut chunk);
        streamed.push_str(&chunk);
        from = to;
    }
    streamed.push_str(&secrets.flush_stream(&mut held));
    assert_eq!(streamed, whole, "chunks of {size} bytes");
    // Placeholders may spell a secret (a secret `ret(`): cut them out before looking.
    let mut shown = whole;
    for (name, _) in &pairs {
        shown = shown.replace(&placeholder(name), "\0");
    }
    assert!(
        !secrets.reveals_secret(&shown),
        "a secret left in {shown:?}"
    );
});
