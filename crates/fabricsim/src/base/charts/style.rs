//! How charts look: the Okabe-Ito palette, the other colours and the font sizes.

use plotters::prelude::*;

use super::font::FAMILY;

/// Okabe-Ito colour-blind friendly palette, ordered for contrast on white. A panel holds
/// at most [`super::MAX_SERIES_PER_PANEL`] series, so no two series of a panel share a
/// colour.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0xC9, 0xB6, 0x00), // darkened yellow
];
const _: () = assert!(PALETTE.len() >= super::MAX_SERIES_PER_PANEL);

const TEXT_COLOR: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(super) const GRID_COLOR: RGBColor = RGBColor(0xE2, 0xE2, 0xE2);
pub(super) const AXIS_COLOR: RGBColor = RGBColor(0x55, 0x55, 0x55);
pub(super) const MUTED_COLOR: RGBColor = RGBColor(0x88, 0x88, 0x88);
/// The bound marks (black, so they read as a reference and not as one more series).
pub(super) const BOUND_COLOR: RGBColor = RGBColor(0x11, 0x11, 0x11);

/// Pixel sizes of the fonts as they appear in the SVG.
pub(super) const CAPTION_PX: f64 = 14.0;
pub(super) const LEGEND_PX: f64 = 12.0;
pub(super) const DESC_PX: f64 = 13.0;
pub(super) const TICK_PX: f64 = 12.0;

/// Colour of series `i` of a panel.
pub(super) fn series_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A text style whose SVG `font-size` is `px` (plotters writes the size divided by 1.24).
pub(super) fn font(px: f64) -> TextStyle<'static> {
    TextStyle::from((FAMILY, px * 1.24).into_font()).color(&TEXT_COLOR)
}
