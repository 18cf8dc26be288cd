//! How charts look: the Okabe-Ito palette and the other colours, how series past the
//! first round of the palette are told apart, the font sizes, and a rough estimate of
//! the width of a text.

use plotters::prelude::*;

/// Okabe-Ito colour-blind friendly palette, ordered for contrast on white.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x33, 0x33, 0x33), // near black
    RGBColor(0xC9, 0xB6, 0x00), // darkened yellow
];
const TEXT_COLOR: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(super) const GRID_COLOR: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
pub(super) const AXIS_COLOR: RGBColor = RGBColor(0x55, 0x55, 0x55);
pub(super) const MUTED_COLOR: RGBColor = RGBColor(0x88, 0x88, 0x88);

/// Pixel sizes of the fonts as they appear in the SVG.
pub(super) const TITLE_PX: f64 = 17.0;
pub(super) const LEGEND_PX: f64 = 13.0;
pub(super) const DESC_PX: f64 = 13.0;
pub(super) const TICK_PX: f64 = 12.0;
/// Rough average advance of a sans-serif character, as a fraction of the font size.
pub(super) const CHAR_EM: f64 = 0.58;
/// The same for bold text.
pub(super) const BOLD_CHAR_EM: f64 = 0.62;

/// Colour of series `i`: the palette, repeated.
pub(super) fn series_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Series past the first round of the palette are drawn differently (dashed lines,
/// outlined light bars) so that no two series look the same.
pub(super) fn second_round(i: usize) -> bool {
    (i / PALETTE.len()) % 2 == 1
}

pub(super) fn lighten(c: RGBColor) -> RGBColor {
    let mix = |v: u8| ((u16::from(v) + 255) / 2) as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// A text style whose SVG `font-size` is `px` (plotters divides the size by 1.24).
pub(super) fn font(px: f64) -> TextStyle<'static> {
    font_styled(px, FontStyle::Normal)
}

pub(super) fn font_styled(px: f64, style: FontStyle) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", px * 1.24, style).into_font()).color(&TEXT_COLOR)
}

pub(super) fn text_width(s: &str, px: f64) -> f64 {
    s.chars().count() as f64 * px * CHAR_EM
}
