//! HTML escaping, shared by the page and its tables (a leaf, so neither imports the other
//! back).

/// Escapes text for HTML content and attributes.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
