//! Tests of whole pages and of both kinds of chart: structure, escaping, determinism,
//! what is plotted (bars from zero and in proportion, bound marks, panels, distinct
//! colours), edge cases and random input.

use super::*;
use proptest::prelude::*;

const MIB: f64 = 1024.0 * 1024.0;

fn sizes() -> Vec<String> {
    ["1 MiB", "4 MiB", "16 MiB", "64 MiB", "256 MiB", "512 MiB"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn jct_chart() -> BarChart {
    let mult = [1.0, 4.0, 16.0, 64.0, 256.0, 512.0];
    let ms = |m: f64| m * MIB * 8.0 / 100e9 * 1e3;
    let series: Vec<(String, Vec<Option<f64>>)> = vec![
        (
            "RoCE".into(),
            mult.iter().map(|&m| Some(ms(m) * 1.3)).collect(),
        ),
        (
            "GSE".into(),
            mult.iter().map(|&m| Some(ms(m) * 1.1)).collect(),
        ),
        (
            "GSE + spraying".into(),
            mult.iter()
                .enumerate()
                .map(|(i, &m)| (i != 2).then_some(ms(m) * 1.05))
                .collect(),
        ),
    ];
    let bound = series
        .iter()
        .map(|_| mult.iter().map(|&m| Some(ms(m))).collect())
        .collect();
    BarChart {
        title: "Job completion time, all-reduce".into(),
        x_label: "message size".into(),
        y_label: "JCT (ms)".into(),
        categories: sizes(),
        series,
        bound: Some(Bound {
            name: "JCT lower bound".into(),
            values: bound,
        }),
        refs: Vec::new(),
        note: "Black marks: the lower bound.".into(),
    }
}

/// Two series over three categories, values like incast-pfc's (5.2 ms vs 8.9 ms).
fn throughput_chart() -> BarChart {
    BarChart {
        title: "FCT p99".into(),
        x_label: "variant".into(),
        y_label: "FCT p99 (ms)".into(),
        categories: vec![
            "incast 8:1".into(),
            "incast 16:1".into(),
            "all-to-all".into(),
        ],
        series: vec![
            ("RoCE".into(), vec![Some(5.2), Some(7.0), Some(3.5)]),
            ("GSE".into(), vec![Some(8.9), Some(6.1), Some(3.9)]),
        ],
        bound: None,
        refs: Vec::new(),
        note: PERCENTILE_NOTE.into(),
    }
}

fn cdf_chart() -> LineChart {
    let cdf = |scale: f64| -> Vec<(f64, f64)> {
        let n = 200;
        (0..n)
            .map(|i| {
                let p = (i + 1) as f64 / n as f64;
                (scale * (1.0 + 1000.0 * p.powi(6)), p)
            })
            .collect()
    };
    LineChart {
        title: "FCT CDF".into(),
        x_label: "flow completion time (ns)".into(),
        y_label: "fraction of flows (0–1)".into(),
        series: vec![("RoCE".into(), cdf(2000.0)), ("GSE".into(), cdf(1500.0))],
        log_x: true,
        log_y: true,
        step: true,
        note: "CDF note".into(),
        ..LineChart::default()
    }
}

fn table() -> Table {
    Table {
        title: "Summary".into(),
        header: vec![
            "variant".into(),
            "JCT (ms)".into(),
            "drops (packets)".into(),
        ],
        rows: vec![
            vec!["RoCE".into(), "12.5".into(), "0".into()],
            vec!["GSE".into(), "9.8".into(), "3".into()],
            vec!["short".into()],
        ],
    }
}

fn sample_sections() -> Vec<Section> {
    vec![
        Section::Heading("Results".into()),
        Section::Text("First paragraph.\n\nSecond paragraph.".into()),
        Section::Bar(jct_chart()),
        Section::Bar(throughput_chart()),
        Section::Line(cdf_chart()),
        Section::Table(table()),
    ]
}

fn one_svg(panels: Vec<String>) -> String {
    assert_eq!(panels.len(), 1, "one panel");
    panels.into_iter().next().unwrap_or_default()
}

/// The text content of every `<text>` element of an SVG, trimmed and unescaped.
fn svg_texts(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        rest = &rest[i..];
        let Some(gt) = rest.find('>') else { break };
        let Some(end) = rest.find("</text>") else {
            break;
        };
        out.push(
            rest[gt + 1..end]
                .trim()
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&"),
        );
        rest = &rest[end..];
    }
    out
}

/// Attributes of every `<tag ...>` element of an SVG (plotters writes one per line).
fn elements(svg: &str, tag: &str) -> Vec<Vec<(String, String)>> {
    let open = format!("<{tag} ");
    svg.lines()
        .filter(|l| l.starts_with(&open))
        .map(|l| {
            let mut attrs = Vec::new();
            let mut rest = &l[open.len()..];
            while let Some(eq) = rest.find("=\"") {
                let key = rest[..eq].trim().to_string();
                let val_start = eq + 2;
                let Some(len) = rest[val_start..].find('"') else {
                    break;
                };
                attrs.push((key, rest[val_start..val_start + len].to_string()));
                rest = &rest[val_start + len + 1..];
            }
            attrs
        })
        .collect()
}

fn attr<'a>(e: &'a [(String, String)], k: &str) -> Option<&'a str> {
    e.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str())
}

/// Filled rectangles in `fill` colour: (x, y, width, height).
fn rects(svg: &str, fill: &str) -> Vec<(f64, f64, f64, f64)> {
    elements(svg, "rect")
        .iter()
        .filter(|e| attr(e, "fill") == Some(fill))
        .filter_map(|e| {
            let n = |k| attr(e, k)?.parse::<f64>().ok();
            Some((n("x")?, n("y")?, n("width")?, n("height")?))
        })
        .collect()
}

/// Stroke colours of the polylines (lines, marks, legend swatches) of an SVG.
fn stroke_colours(svg: &str) -> Vec<String> {
    elements(svg, "polyline")
        .iter()
        .filter_map(|e| attr(e, "stroke").map(String::from))
        .collect()
}

#[test]
fn page_structure() {
    let html = render_html("fabricsim report", &sample_sections());
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..40]);
    assert!(html.contains("<meta charset=\"utf-8\">"));
    assert!(html.contains("<style>"));
    assert!(html.contains("<h1>fabricsim report</h1>"));
    assert_eq!(html.matches("<svg").count(), 3, "one <svg per chart");
    assert_eq!(html.matches("</svg>").count(), 3);
    assert_eq!(html.matches("<figure").count(), 3);
    assert_eq!(html.matches("<table>").count(), 1);
    assert_eq!(html.matches("<tr>").count(), 4, "header + 3 rows");
    assert_eq!(html.matches("</tr>").count(), 4);
    assert_eq!(html.matches("<thead>").count(), 1);
    assert_eq!(html.matches("<tbody>").count(), 1);
    // short rows are padded
    assert_eq!(html.matches("<td").count(), 9);
    assert!(html.contains("<td class=\"num\">12.5</td>"));
    assert!(html.contains("<td>RoCE</td>"));
    assert_eq!(html.matches("<p>").count(), 2);
    // every chart has its note under it
    assert_eq!(html.matches("<figcaption class=\"note\">").count(), 3);
    // self-contained
    for banned in [
        "<img", "<script", "<link", "src=", "href=", "url(", "@import",
    ] {
        assert!(!html.contains(banned), "page contains {banned}");
    }
    let http: Vec<_> = html.match_indices("http").collect();
    assert!(
        html.matches("http").count() == html.matches("http://www.w3.org/2000/svg").count(),
        "only the SVG namespace may name a URL: {http:?}"
    );
    check_well_formed(&html).unwrap();
    // sections in order, each chart's note after its panels
    let order = [
        "<h2>Results",
        "<p>First",
        "Job completion time",
        "Black marks",
        "FCT p99",
        "FCT CDF",
        "CDF note",
        "<table>",
    ];
    let pos: Vec<usize> = order.iter().map(|s| html.find(s).unwrap()).collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{pos:?}");
}

#[test]
fn well_formed_page_with_all_kinds() {
    let html = render_html("all kinds", &sample_sections());
    check_well_formed(&html).unwrap();
    for svg in [
        bar_chart_panels(&jct_chart()),
        bar_chart_panels(&throughput_chart()),
        line_chart_panels(&cdf_chart()),
    ]
    .into_iter()
    .flatten()
    {
        assert!(svg.starts_with("<svg"));
        check_well_formed(&svg).unwrap();
    }
}

#[test]
fn escaping() {
    let nasty = "<b>&\"";
    let mut chart = throughput_chart();
    chart.title = nasty.into();
    chart.note = nasty.into();
    chart.categories[0] = nasty.into();
    chart.series[0].0 = nasty.into();
    chart.x_label = nasty.into();
    let mut t = table();
    t.title = nasty.into();
    t.header[0] = nasty.into();
    t.rows[0][0] = nasty.into();
    let sections = vec![
        Section::Heading(nasty.into()),
        Section::Text(nasty.into()),
        Section::Bar(chart.clone()),
        Section::Table(t),
    ];
    let html = render_html(nasty, &sections);
    assert!(!html.contains(nasty));
    assert!(!html.contains("<b>"));
    let esc = "&lt;b&gt;&amp;&quot;";
    assert!(html.contains(&format!("<title>{esc}</title>")));
    assert!(html.contains(&format!("<h1>{esc}</h1>")));
    assert!(html.contains(&format!("<h2>{esc}</h2>")));
    assert!(html.contains(&format!("<th>{esc}</th>")));
    assert!(html.contains(&format!("<caption>{esc}</caption>")));
    assert!(html.contains(&format!("<figcaption class=\"title\">{esc}</figcaption>")));
    assert!(html.contains(&format!("<figcaption class=\"note\">{esc}</figcaption>")));
    assert!(html.contains(&format!("aria-label=\"{esc}\"")));
    check_well_formed(&html).unwrap();
    // In the SVG: the category, the legend entry and the x description.
    let texts = svg_texts(&one_svg(bar_chart_panels(&chart)));
    assert!(
        texts.iter().filter(|t| *t == nasty).count() >= 3,
        "{texts:?}"
    );
    assert_eq!(escape_html("a'b\u{7}"), "a&#39;b ");
    // Control characters never reach the page.
    let html = render_html("a\u{1}b", &[Section::Text("c\u{0}d".into())]);
    assert!(
        html.contains("<h1>a b</h1>") && html.contains("<p>c d</p>"),
        "{html}"
    );
}

#[test]
fn deterministic() {
    let a = render_html("r", &sample_sections());
    let b = render_html("r", &sample_sections());
    assert_eq!(a, b);
    assert_eq!(
        bar_chart_panels(&jct_chart()),
        bar_chart_panels(&jct_chart())
    );
    assert_eq!(
        line_chart_panels(&cdf_chart()),
        line_chart_panels(&cdf_chart())
    );
}

#[test]
fn charts_name_every_category_series_and_axis() {
    for chart in [jct_chart(), throughput_chart()] {
        let texts = svg_texts(&one_svg(bar_chart_panels(&chart)));
        for name in chart
            .categories
            .iter()
            .chain(chart.series.iter().map(|s| &s.0))
        {
            assert!(texts.contains(name), "{name} missing from {texts:?}");
        }
        assert!(texts.contains(&chart.x_label), "{texts:?}");
        assert!(texts.contains(&chart.y_label), "{texts:?}");
    }
    let c = cdf_chart();
    let texts = svg_texts(&one_svg(line_chart_panels(&c)));
    assert!(
        texts.contains(&c.x_label) && texts.contains(&c.y_label),
        "{texts:?}"
    );
    assert!(texts.contains(&"RoCE".to_string()) && texts.contains(&"GSE".to_string()));
}

#[test]
fn bars_start_at_zero_and_are_in_proportion() {
    let c = throughput_chart();
    assert_eq!(bar_plan(&c).y.start, 0.0);
    let svg = one_svg(bar_chart_panels(&c));
    // Series colours: blue (RoCE), orange (GSE); the legend swatch is the smallest rect.
    let mut blue = rects(&svg, "#0072B2");
    let mut orange = rects(&svg, "#E69F00");
    for v in [&mut blue, &mut orange] {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(v.len(), 4, "3 bars + 1 legend swatch: {v:?}");
    }
    let bars = |v: &[(f64, f64, f64, f64)]| -> Vec<(f64, f64, f64, f64)> {
        v.iter().copied().filter(|r| r.2 > 20.0).collect()
    };
    let (blue, orange) = (bars(&blue), bars(&orange));
    assert_eq!((blue.len(), orange.len()), (3, 3));
    // Every bar stands on the same baseline (zero), and heights follow the values:
    // 5.2 vs 8.9 reads as 0.58, not as a log axis' 20x.
    let base = blue[0].1 + blue[0].3;
    for r in blue.iter().chain(&orange) {
        assert!((r.1 + r.3 - base).abs() <= 1.0, "{r:?} base {base}");
    }
    let ratio = blue[0].3 / orange[0].3;
    assert!((ratio - 5.2 / 8.9).abs() < 0.02, "{ratio}");
    let ratio = blue[2].3 / orange[2].3;
    assert!((ratio - 3.5 / 3.9).abs() < 0.02, "{ratio}");
    // Grouped: each RoCE bar just left of its GSE bar, groups apart.
    for (b, o) in blue.iter().zip(&orange) {
        assert!(b.0 + b.2 <= o.0 && o.0 - (b.0 + b.2) < 20.0, "{b:?} {o:?}");
    }
    assert!(orange[0].0 + orange[0].2 + 30.0 < blue[1].0);
    // Negative values: the axis ends at zero instead.
    let neg = BarChart {
        series: vec![("neg".into(), vec![Some(-3.0), Some(-1.0), None])],
        ..throughput_chart()
    };
    assert_eq!(bar_plan(&neg).y.end, 0.0);
}

#[test]
fn jct_chart_draws_the_bound_on_every_bar() {
    let c = jct_chart();
    let plan = bar_plan(&c);
    assert_eq!(plan.y.start, 0.0);
    let svg = one_svg(bar_chart_panels(&c));
    let marks = stroke_colours(&svg)
        .iter()
        .filter(|s| *s == "#111111")
        .count();
    // 6 + 6 + 6 bound values, plus the legend swatch.
    assert_eq!(marks, 18 + 1, "{svg}");
    assert!(svg_texts(&svg).contains(&"JCT lower bound".to_string()));
    // The largest bound is inside the y range.
    let top = c.bound.as_ref().unwrap().values[0][5].unwrap();
    assert!(plan.y.end > top);
}

#[test]
fn more_than_six_series_become_panels_with_distinct_colours() {
    // Bars: 8 runs -> 8 panels of one run each, sharing the y range.
    let c = BarChart {
        series: (0..8)
            .map(|j| (format!("run {j}"), vec![Some(j as f64 + 1.0); 3]))
            .collect(),
        ..throughput_chart()
    };
    let plan = bar_plan(&c);
    assert_eq!(plan.panels.len(), 8);
    assert!(plan.panels.iter().all(|p| p.series.len() == 1));
    let svgs = bar_chart_panels(&c);
    assert_eq!(svgs.len(), 8);
    for (j, svg) in svgs.iter().enumerate() {
        assert!(
            svg_texts(svg).contains(&format!("run {j}")),
            "panel caption"
        );
        check_well_formed(svg).unwrap();
    }
    let html = render_html("p", &[Section::Bar(c)]);
    assert_eq!(html.matches("<svg").count(), 8);
    assert!(html.contains("class=\"panels\""));
    // Lines: 2 runs x 5 flows -> one panel per run, five distinct colours in each.
    let mut series = Vec::new();
    let mut groups = Vec::new();
    for run in ["a", "b"] {
        for f in 0..5 {
            series.push((
                format!("{run}: flow {f}"),
                vec![(0.0, f as f64), (1.0, f as f64 + 1.0), (2.0, 0.5)],
            ));
            groups.push(run.to_string());
        }
    }
    let c = LineChart {
        series,
        groups,
        ..LineChart::over_time("rates", "rate (Gbps)", Vec::new())
    };
    let plan = line_plan(&c);
    let titles: Vec<&str> = plan.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(titles, ["a", "b"]);
    for svg in line_chart_panels(&c) {
        let mut colours = stroke_colours(&svg);
        colours.retain(|s| s.starts_with('#') && s != "#E2E2E2" && s != "#555555");
        colours.sort();
        colours.dedup();
        assert_eq!(colours.len(), 5, "{colours:?}");
    }
}

#[test]
fn six_series_share_one_panel_with_a_legend() {
    let c = BarChart {
        series: (0..6)
            .map(|j| (format!("v{j}"), vec![Some(1.0); 3]))
            .collect(),
        ..throughput_chart()
    };
    let svg = one_svg(bar_chart_panels(&c));
    let texts = svg_texts(&svg);
    for j in 0..6 {
        assert!(texts.contains(&format!("v{j}")), "{texts:?}");
    }
}

fn edge_bar_charts() -> Vec<BarChart> {
    let base = throughput_chart();
    let long = "a very long title ".repeat(40);
    vec![
        BarChart::default(),
        BarChart {
            series: vec![],
            ..base.clone()
        },
        BarChart {
            series: vec![("none".into(), vec![None, None, None])],
            ..base.clone()
        },
        BarChart {
            series: vec![("bad".into(), vec![Some(0.0), Some(-5.0), Some(f64::NAN)])],
            ..base.clone()
        },
        BarChart {
            series: vec![(
                "mixed".into(),
                vec![Some(f64::INFINITY), Some(-5.0), Some(f64::NEG_INFINITY)],
            )],
            ..base.clone()
        },
        BarChart {
            series: vec![
                ("short".into(), vec![Some(1.0)]),
                ("long".into(), vec![Some(2.0); 10]),
            ],
            bound: Some(Bound {
                name: "b".into(),
                values: vec![vec![Some(f64::NAN)]],
            }),
            ..base.clone()
        },
        BarChart {
            categories: (0..40).map(|i| format!("category number {i}")).collect(),
            series: (0..20)
                .map(|j| {
                    (
                        format!("series {j} with a long name"),
                        (0..40).map(|i| Some((i * j) as f64)).collect(),
                    )
                })
                .collect(),
            ..base.clone()
        },
        BarChart {
            title: long.clone(),
            x_label: long.clone(),
            y_label: long.clone(),
            categories: vec![long.clone()],
            series: vec![(long.clone(), vec![Some(1e-300), Some(1e300)])],
            ..base.clone()
        },
        BarChart {
            series: vec![(
                "huge".into(),
                vec![Some(f64::MAX), Some(-f64::MAX), Some(1.0)],
            )],
            ..base.clone()
        },
        BarChart {
            title: "ctrl\u{0}\u{1b}chars\n\ttab".into(),
            categories: vec!["\u{FFFF}".into(), "".into(), " ".into()],
            ..base
        },
    ]
}

fn edge_line_charts() -> Vec<LineChart> {
    let base = cdf_chart();
    vec![
        LineChart::default(),
        LineChart {
            series: vec![("empty".into(), vec![])],
            ..base.clone()
        },
        LineChart {
            series: vec![("single".into(), vec![(3.0, 4.0)])],
            ..base.clone()
        },
        LineChart {
            series: vec![("single".into(), vec![(3.0, 4.0)])],
            log_x: false,
            log_y: false,
            ..base.clone()
        },
        LineChart {
            series: vec![(
                "nonpositive".into(),
                vec![(0.0, 1.0), (-1.0, 2.0), (1.0, 0.0), (2.0, -3.0)],
            )],
            ..base.clone()
        },
        LineChart {
            series: vec![(
                "nan".into(),
                vec![
                    (f64::NAN, 1.0),
                    (1.0, f64::INFINITY),
                    (2.0, 2.0),
                    (f64::NEG_INFINITY, 3.0),
                    (3.0, 3.0),
                    (4.0, f64::NAN),
                ],
            )],
            step: false,
            ..base.clone()
        },
        LineChart {
            series: vec![("unordered".into(), vec![(5.0, 1.0), (1.0, 2.0), (3.0, 0.5)])],
            ..base.clone()
        },
        LineChart {
            title: "x".repeat(5000),
            series: (0..30)
                .map(|j| {
                    (
                        format!("s{j}"),
                        vec![(1.0, j as f64 + 1.0), (2.0, j as f64 + 2.0)],
                    )
                })
                .collect(),
            ..base.clone()
        },
        LineChart {
            series: vec![("span".into(), vec![(1e-300, 1e-300), (1e300, 1e300)])],
            ..base.clone()
        },
        LineChart {
            series: vec![("span".into(), vec![(1e-150, 1e-150), (1e150, 1e150)])],
            ..base.clone()
        },
        LineChart {
            series: vec![("span".into(), vec![(-1e300, -1e300), (1e300, 1e300)])],
            log_x: false,
            log_y: false,
            ..base
        },
    ]
}

#[test]
fn edge_cases_do_not_panic() {
    let mut sections = Vec::new();
    for c in edge_bar_charts() {
        for svg in bar_chart_panels(&c) {
            assert!(svg.starts_with("<svg"), "{c:?}");
            assert_eq!(svg.matches("<svg").count(), 1);
            assert!(!svg.contains("chart could not be drawn"), "{c:?}");
            check_well_formed(&svg)
                .map_err(|e| format!("{c:?}: {e}"))
                .unwrap();
        }
        sections.push(Section::Bar(c));
    }
    for c in edge_line_charts() {
        for svg in line_chart_panels(&c) {
            assert!(svg.starts_with("<svg"), "{c:?}");
            assert_eq!(svg.matches("<svg").count(), 1);
            assert!(!svg.contains("chart could not be drawn"), "{c:?}");
            check_well_formed(&svg)
                .map_err(|e| format!("{c:?}: {e}"))
                .unwrap();
        }
        sections.push(Section::Line(c));
    }
    sections.push(Section::Table(Table::default()));
    sections.push(Section::Text(String::new()));
    sections.push(Section::Heading(String::new()));
    let html = render_html("", &sections);
    check_well_formed(&html).unwrap();
}

#[test]
fn no_data_is_said() {
    let c = BarChart {
        series: vec![("none".into(), vec![None, None, None])],
        ..throughput_chart()
    };
    let has = |svg: String| svg_texts(&svg).contains(&"no data".to_string());
    assert!(has(one_svg(bar_chart_panels(&c))));
    assert!(!has(one_svg(bar_chart_panels(&throughput_chart()))));
    let l = LineChart {
        series: vec![("neg".into(), vec![(-1.0, -1.0)])],
        ..cdf_chart()
    };
    assert!(has(one_svg(line_chart_panels(&l))));
}

#[test]
fn long_labels_are_shortened_to_fit() {
    let c = BarChart {
        categories: vec!["y".repeat(500), "b".into()],
        series: vec![
            ("z".repeat(300), vec![Some(1.0), Some(2.0)]),
            ("s".into(), vec![Some(1.0), Some(2.0)]),
        ],
        ..throughput_chart()
    };
    let texts = svg_texts(&one_svg(bar_chart_panels(&c)));
    for prefix in ["yyy", "zzz"] {
        let t = texts.iter().find(|t| t.starts_with(prefix)).unwrap();
        assert!(t.chars().count() < 100 && t.ends_with('…'), "{t}");
    }
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -1e12f64..1e12,
        2 => 1e-9f64..1e12,
        1 => Just(0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => any::<f64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_bar_charts_render(
        categories in prop::collection::vec(".{0,12}", 0..8),
        series in prop::collection::vec(
            (".{0,12}", prop::collection::vec(prop::option::of(value()), 0..10)), 0..9),
    ) {
        let c = BarChart { title: "t".into(), x_label: "x".into(), y_label: "y".into(), categories, series, ..BarChart::default() };
        let plan = bar_plan(&c);
        prop_assert!(plan.y.start <= 0.0 && plan.y.end >= 0.0 && plan.y.start < plan.y.end);
        for svg in bar_chart_panels(&c) {
            prop_assert!(svg.starts_with("<svg"));
            prop_assert_eq!(svg.matches("<svg").count(), 1);
            prop_assert_eq!(check_well_formed(&svg), Ok(()));
        }
    }

    #[test]
    fn random_line_charts_render(
        series in prop::collection::vec(
            (".{0,12}", prop::collection::vec((value(), value()), 0..30)), 0..9),
        log_x in any::<bool>(),
        log_y in any::<bool>(),
        step in any::<bool>(),
    ) {
        let c = LineChart { title: "t".into(), series, log_x, log_y, step, ..LineChart::default() };
        for svg in line_chart_panels(&c) {
            prop_assert!(svg.starts_with("<svg"));
            prop_assert_eq!(svg.matches("<svg").count(), 1);
            prop_assert_eq!(check_well_formed(&svg), Ok(()));
        }
    }

    #[test]
    fn escaped_text_round_trips_through_the_checker(s in any::<String>()) {
        let html = render_html(&s, &[Section::Text(s.clone()), Section::Heading(s.clone())]);
        prop_assert_eq!(check_well_formed(&html), Ok(()));
    }
}
