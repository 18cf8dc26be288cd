//! The font plotters measures chart text with: DejaVu Sans, embedded in the library
//! (`assets/DejaVuSans.ttf`, with its licence beside it), so that label areas, legend
//! boxes and panel captions are laid out the same on every machine whatever fonts it has.
//!
//! The SVG names the same font first (`FAMILY`), then Verdana (close metrics) and the
//! generic sans-serif, so a browser draws text about as wide as it was measured.

use std::sync::Once;

use plotters::style::{register_font, FontStyle};

/// The family name the font is registered under and that the SVG's `font-family`
/// attributes carry (plotters writes the registered name as is).
pub(super) const FAMILY: &str = "DejaVu Sans, Verdana, sans-serif";

static DEJAVU_SANS: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");

/// Registers the embedded font with plotters (once per process; every chart calls it).
pub(super) fn ensure_registered() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Bold text (none is drawn today) would fall back to the regular face.
        if register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_err() {
            // The bytes are a fixed asset checked by a test; a failure here is a broken
            // build, and plotters would then report errors that the charts turn into
            // their fallback drawing.
            debug_assert!(false, "embedded DejaVu Sans does not parse");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_font_parses_and_measures() {
        ensure_registered();
        let font = plotters::style::FontDesc::new(
            plotters::style::FontFamily::Name(FAMILY),
            13.0,
            FontStyle::Normal,
        );
        let (w1, _) = font.box_size("i").expect("font registered");
        let (w2, _) = font.box_size("WWWW").expect("font registered");
        // Proportional metrics: four W are far wider than one i.
        assert!(w2 > 8 * w1, "{w1} {w2}");
    }
}
