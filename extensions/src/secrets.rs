//! Secrets: values the agent may use but never shows.
//!
//! Agent Zero's convention: the model sees a secret only as its placeholder `§§secret(NAME)`
//! (the system prompt lists the names). The agent runtime masks every payload before its point
//! fires ([`SecretStore::mask`]), so no extension sees a value, and the history, the log, the
//! trace and what goes to the models are masked too; the arguments of `tool.execute` alone have
//! the placeholders replaced by the values, just before the tool runs
//! ([`SecretStore::unmask_json`]).

use std::borrow::Cow;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};

mod json_view;

use json_view::{JsonView, cut_escape_start};

/// The secrets of an agent, shared cheaply (`Clone` is an `Arc`).
///
/// Empty values are ignored (masking "" would rewrite every text). `Debug` shows names only.
///
/// ```
/// use hookpoint_extensions::secrets::SecretStore;
/// let secrets = SecretStore::from_pairs([("API_KEY", "sk-live-123456")]);
/// assert_eq!(secrets.mask("key=sk-live-123456"), "key=§§secret(API_KEY)");
/// assert_eq!(secrets.unmask("key=§§secret(API_KEY)"), "key=sk-live-123456");
/// ```
#[derive(Clone, Default)]
pub struct SecretStore {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    names: Vec<String>,
    values: Vec<String>,
    placeholders: Vec<String>,
    /// Length in bytes of the longest value.
    longest: usize,
    masker: Option<AhoCorasick>,
    unmasker: Option<AhoCorasick>,
}

/// At most how many bytes of text spell one byte of a value (JSON's `\u0041` for `A`).
const MAX_ESCAPED_BYTES: usize = 6;

/// A value found in a text: its byte range there, and which secret it is.
struct Found {
    start: usize,
    end: usize,
    secret: usize,
}

/// A secrets file could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read secrets from {path}: {source}")]
pub struct SecretsError {
    /// The file.
    pub path: std::path::PathBuf,
    /// Why.
    #[source]
    pub source: dotenvy::Error,
}

/// The placeholder the model sees for the secret `name`: `§§secret(name)`.
pub fn placeholder(name: &str) -> String {
    format!("§§secret({name})")
}

impl SecretStore {
    /// No secrets: masking and unmasking return the text unchanged.
    pub fn new() -> Self {
        Self::default()
    }

    /// Secrets from `(name, value)` pairs; a later pair with the same name wins.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let mut names: Vec<String> = Vec::new();
        let mut values: Vec<String> = Vec::new();
        for (k, v) in pairs {
            let (k, v) = (k.into(), v.into());
            if v.is_empty() {
                continue;
            }
            match names.iter().position(|n| *n == k) {
                Some(i) => values[i] = v,
                None => {
                    names.push(k);
                    values.push(v);
                }
            }
        }
        let placeholders: Vec<String> = names.iter().map(|n| placeholder(n)).collect();
        let build = |pats: &[String]| {
            (!pats.is_empty()).then(|| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(pats)
                    .expect("literal patterns always build")
            })
        };
        SecretStore {
            inner: Arc::new(Inner {
                longest: values.iter().map(String::len).max().unwrap_or(0),
                masker: build(&values),
                unmasker: build(&placeholders),
                names,
                values,
                placeholders,
            }),
        }
    }

    /// Secrets from a dotenv file (`NAME=value` lines, `#` comments, quotes), as Agent Zero keeps
    /// them in `usr/secrets.env`. Parsed with `dotenvy`.
    ///
    /// # Errors
    /// [`SecretsError`] when the file cannot be read or a line cannot be parsed.
    pub fn from_env_file(path: impl AsRef<Path>) -> Result<Self, SecretsError> {
        let path = path.as_ref();
        let err = |source| SecretsError {
            path: path.to_owned(),
            source,
        };
        let pairs = dotenvy::from_path_iter(path)
            .map_err(err)?
            .collect::<Result<Vec<(String, String)>, _>>()
            .map_err(err)?;
        Ok(Self::from_pairs(pairs))
    }

    /// The secrets' names, in the order they were given.
    pub fn names(&self) -> &[String] {
        &self.inner.names
    }

    /// True when there are no secrets.
    pub fn is_empty(&self) -> bool {
        self.inner.names.is_empty()
    }

    /// `text` with every secret value replaced by its placeholder (the longest match wins).
    ///
    /// A value also counts where the text spells it with JSON escapes, as the model may in a
    /// tool request (`p\u00e4ss` for `päss`, `a\/b` for `a/b`, `x\"y` for `x"y`): whoever
    /// parses that JSON reads the value, so the escaped spelling is masked too.
    ///
    /// ```
    /// use hookpoint_extensions::secrets::SecretStore;
    /// let secrets = SecretStore::from_pairs([("PW", "pässwörd")]);
    /// assert_eq!(
    ///     secrets.mask(r#"{"pw":"p\u00e4ssw\u00f6rd"}"#),
    ///     r#"{"pw":"§§secret(PW)"}"#
    /// );
    /// ```
    pub fn mask<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Some(ac) = &self.inner.masker else {
            return Cow::Borrowed(text);
        };
        if !text.contains('\\') {
            return match ac.is_match(text) {
                true => Cow::Owned(ac.replace_all(text, &self.inner.placeholders)),
                false => Cow::Borrowed(text),
            };
        }
        let found = self.found(ac, text);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for f in &found {
            out.push_str(&text[at..f.start]);
            out.push_str(&self.inner.placeholders[f.secret]);
            at = f.end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// Where `text` holds a value, as written or spelled with JSON escapes: byte ranges in
    /// `text`, in order, not overlapping (overlapping finds are merged into the first).
    fn found(&self, ac: &AhoCorasick, text: &str) -> Vec<Found> {
        let mut found: Vec<Found> = ac
            .find_iter(text)
            .map(|m| Found {
                start: m.start(),
                end: m.end(),
                secret: m.pattern().as_usize(),
            })
            .collect();
        if text.contains('\\') {
            let view = JsonView::of(text);
            found.extend(ac.find_iter(&view.text).map(|m| Found {
                start: view.raw(m.start()),
                end: view.raw(m.end()),
                secret: m.pattern().as_usize(),
            }));
            found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
            let mut merged: Vec<Found> = Vec::with_capacity(found.len());
            for f in found {
                match merged.last_mut() {
                    Some(last) if f.start < last.end => last.end = last.end.max(f.end),
                    _ => merged.push(f),
                }
            }
            found = merged;
        }
        found
    }

    /// `text` with every placeholder replaced by its secret value.
    pub fn unmask<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match &self.inner.unmasker {
            Some(ac) if ac.is_match(text) => Cow::Owned(ac.replace_all(text, &self.inner.values)),
            _ => Cow::Borrowed(text),
        }
    }

    /// Masks `text` in place; true when something changed.
    pub fn mask_in_place(&self, text: &mut String) -> bool {
        match self.mask(text) {
            Cow::Owned(masked) => {
                *text = masked;
                true
            }
            Cow::Borrowed(_) => false,
        }
    }

    /// True when `text` contains a secret value, as written or spelled with JSON escapes (see
    /// [`mask`](Self::mask)).
    pub fn reveals_secret(&self, text: &str) -> bool {
        self.inner.masker.as_ref().is_some_and(|ac| {
            ac.is_match(text) || (text.contains('\\') && ac.is_match(&JsonView::of(text).text))
        })
    }

    /// Masks every string (keys too) inside a JSON value. Allocates only where a secret is
    /// found.
    pub fn mask_json(&self, value: &mut serde_json::Value) {
        self.map_json(value, &|s| self.mask(s));
    }

    /// Replaces placeholders by values in every string (keys too) inside a JSON value.
    pub fn unmask_json(&self, value: &mut serde_json::Value) {
        self.map_json(value, &|s| self.unmask(s));
    }

    fn map_json(&self, value: &mut serde_json::Value, f: &dyn for<'t> Fn(&'t str) -> Cow<'t, str>) {
        use serde_json::Value;
        if self.is_empty() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Cow::Owned(changed) = f(s) {
                    *s = changed;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.map_json(v, f)),
            Value::Object(map) => {
                map.values_mut().for_each(|v| self.map_json(v, f));
                if map.keys().any(|k| matches!(f(k), Cow::Owned(_))) {
                    let old = std::mem::take(map);
                    for (k, v) in old {
                        map.insert(f(&k).into_owned(), v);
                    }
                }
            }
            _ => {}
        }
    }

    /// Appends `addition` to `text` so that, if `text` held no secret value, the result holds
    /// none either: a value that `addition` completes across the join is masked too (as written or
    /// spelled with JSON escapes). Only the join is looked at (the last bytes of `text`, fewer
    /// than six times the longest value, and `addition`), so appending a stream chunk by chunk costs the same per chunk however long
    /// the text already is.
    ///
    /// ```
    /// use hookpoint_extensions::secrets::SecretStore;
    /// let secrets = SecretStore::from_pairs([("TOKEN", "abc123")]);
    /// let mut shown = String::from("token: abc");
    /// secrets.push_masked(&mut shown, "123 ok");
    /// assert_eq!(shown, "token: §§secret(TOKEN) ok");
    /// ```
    pub fn push_masked(&self, text: &mut String, addition: &str) {
        if self.inner.masker.is_none() {
            text.push_str(addition);
            return;
        }
        // A value spelled with escapes takes at most 6 bytes a byte (`\u0041` for `A`).
        let mut start = text
            .len()
            .saturating_sub((MAX_ESCAPED_BYTES * self.inner.longest).saturating_sub(1));
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        // Never start between the two halves of an escape.
        while start > 0 && text.as_bytes()[start - 1] == b'\\' {
            start -= 1;
        }
        text.push_str(addition);
        if let Cow::Owned(masked) = self.mask(&text[start..]) {
            text.truncate(start);
            text.push_str(&masked);
        }
    }

    /// Masks one chunk of a stream whose secrets may be split across chunks.
    ///
    /// `held` is text an earlier chunk held back; `chunk` is the new text. Afterwards `chunk` is
    /// what may be shown now (masked) and `held` is the tail that could still become a secret
    /// (the longest suffix that is a proper prefix of a secret value). Call
    /// [`flush_stream`](Self::flush_stream) at the end of the stream.
    ///
    /// ```
    /// use hookpoint_extensions::secrets::SecretStore;
    /// let secrets = SecretStore::from_pairs([("TOKEN", "abc123")]);
    /// let (mut held, mut shown) = (String::new(), String::new());
    /// for part in ["token: ab", "c123 ok"] {
    ///     let mut chunk = part.to_owned();
    ///     secrets.mask_stream(&mut held, &mut chunk);
    ///     shown.push_str(&chunk);
    /// }
    /// shown.push_str(&secrets.flush_stream(&mut held));
    /// assert_eq!(shown, "token: §§secret(TOKEN) ok");
    /// ```
    pub fn mask_stream(&self, held: &mut String, chunk: &mut String) {
        if self.is_empty() {
            return;
        }
        let mut raw = std::mem::take(held);
        raw.push_str(chunk);
        // Hold back a tail that may still grow into a secret, and never split a whole secret.
        let mut split = self.may_grow_from(&raw);
        if let Some(ac) = &self.inner.masker {
            for f in self.found(ac, &raw) {
                if f.start < split && f.end > split {
                    split = f.start;
                }
            }
        }
        *chunk = self.mask(&raw[..split]).into_owned();
        *held = raw[split..].to_owned();
    }

    /// Where the tail of `raw` starts that the next text may still turn into a secret value: a
    /// proper prefix of a value at the end (as written or spelled with JSON escapes), or an
    /// escape the end cuts short. `raw.len()` when there is none.
    fn may_grow_from(&self, raw: &str) -> usize {
        let cut = cut_escape_start(raw);
        let body = &raw[..cut.unwrap_or(raw.len())];
        let mut from = body.len() - self.partial_suffix_len(body);
        if body.contains('\\') {
            let view = JsonView::of(body);
            let partial = self.partial_suffix_len(&view.text);
            from = from.min(view.raw(view.text.len() - partial));
        }
        from.min(cut.unwrap_or(raw.len()))
    }

    /// The text a stream held back, masked; `held` is emptied.
    pub fn flush_stream(&self, held: &mut String) -> String {
        let rest = std::mem::take(held);
        self.mask(&rest).into_owned()
    }

    /// Length in bytes of the longest suffix of `text` that is a proper, non-empty prefix of a
    /// secret value (0 when none).
    fn partial_suffix_len(&self, text: &str) -> usize {
        let mut best = 0;
        for value in &self.inner.values {
            let max = value.len().saturating_sub(1).min(text.len());
            for len in (best + 1..=max).rev() {
                let start = text.len() - len;
                if text.is_char_boundary(start) && value.starts_with(&text[start..]) {
                    best = len;
                    break;
                }
            }
        }
        best
    }
}

impl fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretStore")
            .field("names", &self.inner.names)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> SecretStore {
        SecretStore::from_pairs([("A", "secret-alpha"), ("B", "secret-alphabet")])
    }

    #[test]
    fn the_longest_secret_wins_when_one_is_a_prefix_of_another() {
        assert_eq!(store().mask("x secret-alphabet y"), "x §§secret(B) y");
    }

    #[test]
    fn a_secret_split_over_three_chunks_is_never_shown() {
        let s = store();
        let (mut held, mut shown) = (String::new(), Vec::new());
        for part in ["go secr", "et-al", "pha!"] {
            let mut chunk = part.to_owned();
            s.mask_stream(&mut held, &mut chunk);
            shown.push(chunk);
        }
        shown.push(s.flush_stream(&mut held));
        assert!(
            shown
                .iter()
                .all(|c| !c.contains("secr") || c.contains("§§")),
            "{shown:?}"
        );
        assert_eq!(shown.concat(), "go §§secret(A)!");
    }

    #[test]
    fn appending_masks_a_secret_completed_across_the_join_after_wide_characters() {
        let s = store();
        let mut text = "é".repeat(20) + "secret-alp";
        s.push_masked(&mut text, "habet ok");
        assert_eq!(text, "é".repeat(20) + "§§secret(B) ok");
        let mut text = "ü".repeat(20);
        s.push_masked(&mut text, "plain");
        assert_eq!(text, "ü".repeat(20) + "plain");
    }

    /// Secrets whose JSON spelling differs from the value, and texts that spell them.
    fn escaped() -> (SecretStore, Vec<(&'static str, &'static str)>) {
        let s = SecretStore::from_pairs([
            ("Q", "hunter2\"x\\y"),
            ("U", "pässwörd-42"),
            ("S", "abc/def/123456"),
            ("E", "key-😀-end"),
            ("W", r"C:\Users\svc\key-7781"),
        ]);
        let spelled = vec![
            ("Q", r#"hunter2\"x\\y"#),
            ("U", r"p\u00e4ssw\u00f6rd-42"),
            ("U", r"\u0070\u00E4ssw\u00F6rd\u002d42"),
            ("S", r"abc\/def\/123456"),
            ("E", r"key-\ud83d\ude00-end"),
            ("W", r"C:\\Users\\svc\\key-7781"),
        ];
        (s, spelled)
    }

    #[test]
    fn a_value_spelled_with_json_escapes_is_masked_like_the_value() {
        let (s, spelled) = escaped();
        for (name, text) in spelled {
            let raw = format!(r#"{{"tool_args":{{"pw":"{text}"}}}}"#);
            assert!(s.reveals_secret(&raw), "{raw}");
            assert_eq!(
                s.mask(&raw),
                format!(r#"{{"tool_args":{{"pw":"§§secret({name})"}}}}"#)
            );
        }
        // A value written as it is, backslashes and all, is masked as before.
        assert_eq!(s.mask("say hunter2\"x\\y"), "say §§secret(Q)");
        // Escapes that spell no value stay.
        assert_eq!(s.mask(r"line\nnext \u00e4"), r"line\nnext \u00e4");
    }

    #[test]
    fn an_escaped_value_split_anywhere_across_stream_chunks_is_never_shown() {
        let (s, spelled) = escaped();
        for (name, text) in spelled {
            let raw = format!("go {text} now");
            for cut in (1..raw.len()).filter(|&c| raw.is_char_boundary(c)) {
                let (mut held, mut shown) = (String::new(), String::new());
                for part in [&raw[..cut], &raw[cut..]] {
                    let mut chunk = part.to_owned();
                    s.mask_stream(&mut held, &mut chunk);
                    shown.push_str(&chunk);
                }
                shown.push_str(&s.flush_stream(&mut held));
                assert_eq!(shown, format!("go §§secret({name}) now"), "cut at {cut}");
                let mut appended = raw[..cut].to_owned();
                s.push_masked(&mut appended, &raw[cut..]);
                assert_eq!(appended, format!("go §§secret({name}) now"), "cut at {cut}");
            }
        }
    }

    #[test]
    fn unmask_json_rewrites_nested_strings() {
        let s = store();
        let mut v = serde_json::json!({"h": ["Bearer §§secret(A)"], "n": 1});
        s.unmask_json(&mut v);
        assert_eq!(v, serde_json::json!({"h": ["Bearer secret-alpha"], "n": 1}));
    }

    #[test]
    fn debug_never_shows_values() {
        assert!(!format!("{:?}", store()).contains("secret-alpha"));
    }
}
