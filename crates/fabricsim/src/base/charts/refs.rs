//! Reference lines: a value the reader compares the series with (the ideal slowdown of 1,
//! a ratio of 1 to the baseline, the line rate), drawn dashed in black across the whole
//! plot and named in the legend, so it reads as a reference and not as one more series.

use plotters::coord::CoordTranslate;
use plotters::prelude::*;

use super::plan::usable;
use super::style::BOUND_COLOR;
use super::svg::Swatch;
use super::RefLine;

/// Draws each of `refs` from `x.0` to `x.1` (the plot's ends in its own coordinates);
/// one legend swatch per line. A value the axis cannot show (not positive on a log axis)
/// is left out of the plot but keeps its legend entry.
pub(super) fn draw_refs<'a, DB, X, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    x: (X, X),
    refs: &[RefLine],
    log_y: bool,
) -> Result<Vec<Swatch>, DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    X: Clone + 'static,
    CT: CoordTranslate<From = (X, f64)>,
{
    let mut swatches = Vec::new();
    for r in refs {
        if usable(r.y, log_y) {
            let style = BOUND_COLOR.stroke_width(2);
            chart.draw_series(DashedLineSeries::new(
                vec![(x.0.clone(), r.y), (x.1.clone(), r.y)],
                8,
                5,
                style,
            ))?;
        }
        swatches.push(Swatch::Dashed(BOUND_COLOR));
    }
    Ok(swatches)
}
