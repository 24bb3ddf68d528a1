//! URLs as they may be shown: without the credentials they can carry.
//!
//! An image URL may hold a user and password (`https://user:pass@mirror/…`) or a token in
//! its query (a signed URL's `?X-Amz-Signature=…`). Errors, logs and a custom resource's
//! status show URLs; they show them through [`redact_url`]: the userinfo becomes `***@`,
//! the query `?***`, and the fragment is dropped. [`redact_urls_in`] does the same to every
//! URL in a text of unknown origin (a provider's error message) before it is shown.

/// `text` as a URL fit to show: `https://***@mirror.example/d13.raw?***` for
/// `https://ops:pw@mirror.example/d13.raw?token=…#x`. Works on text that does not parse as
/// a URL too (a configuration error shows what was written).
pub fn redact_url(text: &str) -> String {
    let (scheme, rest) = match text.find("://") {
        Some(i) => text.split_at(i + 3),
        None => ("", text),
    };
    // The authority ends at the first '/', '?' or '#'; its userinfo at its last '@'.
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = match authority.rfind('@') {
        Some(i) => format!("***@{}", &authority[i + 1..]),
        None => authority.to_owned(),
    };
    let tail = tail.split('#').next().unwrap_or_default();
    let tail = match tail.split_once('?') {
        Some((path, _)) => format!("{path}?***"),
        None => tail.to_owned(),
    };
    format!("{scheme}{host}{tail}")
}

/// `text` with every URL in it (a word holding `://`, up to whitespace or a quote, without
/// trailing punctuation) passed through [`redact_url`]; everything else unchanged.
pub fn redact_urls_in(text: &str) -> String {
    let is_end = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        // The scheme: letters, digits, `+`, `-`, `.` before `://`.
        let start = rest[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |j| j + 1);
        let word_end = rest[i..].find(is_end).map_or(rest.len(), |j| i + j);
        // Punctuation after a URL (`…/x.raw: error`, `(…/y)`) belongs to the sentence.
        let end = start
            + rest[start..word_end]
                .trim_end_matches([')', ']', ',', '.', ';', ':'])
                .len();
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_query_and_fragment_go() {
        assert_eq!(
            redact_url("https://ops:pw@mirror.example:8443/d/13.raw?token=abc&x=1#frag"),
            "https://***@mirror.example:8443/d/13.raw?***"
        );
        assert_eq!(
            redact_url("https://mirror.example/d13.raw"),
            "https://mirror.example/d13.raw"
        );
        assert_eq!(redact_url("http://u@h?q"), "http://***@h?***");
        assert_eq!(redact_url("http://u:p@ss@h/x"), "http://***@h/x");
        assert_eq!(redact_url("not a url ?q"), "not a url ?***");
    }

    #[test]
    fn every_url_in_a_text() {
        assert_eq!(
            redact_urls_in(
                "fetch image \"k\" from https://u:p@h/x.raw?t=1: error sending request for \
                 url (http://u:p@h/y?z) and \"ftp://a:b@c/d\""
            ),
            "fetch image \"k\" from https://***@h/x.raw?***: error sending request for \
             url (http://***@h/y?***) and \"ftp://***@c/d\""
        );
        assert_eq!(redact_urls_in("no url here"), "no url here");
        assert_eq!(redact_urls_in("://odd"), "://odd");
    }
}
