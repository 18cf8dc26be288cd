//! Tests of whole pages and of both kinds of chart: structure, escaping, determinism,
//! edge cases and random input.

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
    let cats = sizes();
    let mult = [1.0, 4.0, 16.0, 64.0, 256.0, 512.0];
    BarChart {
        title: "Job completion time, all-reduce".into(),
        x_label: "message size".into(),
        y_label: "JCT (µs)".into(),
        categories: cats,
        series: vec![
            (
                "RoCE".into(),
                mult.iter().map(|m| Some(m * MIB / 50.0 * 1.3)).collect(),
            ),
            (
                "GSE".into(),
                mult.iter().map(|m| Some(m * MIB / 50.0)).collect(),
            ),
            (
                "GSE + spraying".into(),
                mult.iter()
                    .enumerate()
                    .map(|(i, m)| (i != 2).then_some(m * MIB / 50.0 * 0.9))
                    .collect(),
            ),
        ],
        log_y: true,
    }
}

fn throughput_chart() -> BarChart {
    BarChart {
        title: "Goodput".into(),
        x_label: "variant".into(),
        y_label: "Gbit/s".into(),
        categories: vec![
            "incast 8:1".into(),
            "incast 16:1".into(),
            "all-to-all".into(),
        ],
        series: vec![
            ("RoCE".into(), vec![Some(310.5), Some(280.0), Some(350.2)]),
            ("GSE".into(), vec![Some(390.0), Some(385.0), Some(392.1)]),
        ],
        log_y: false,
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
        y_label: "fraction of flows".into(),
        series: vec![("RoCE".into(), cdf(2000.0)), ("GSE".into(), cdf(1500.0))],
        log_x: true,
        log_y: true,
        step: true,
    }
}

fn table() -> Table {
    Table {
        title: "Summary".into(),
        header: vec!["variant".into(), "JCT (ms)".into(), "drops".into()],
        rows: vec![
            vec!["RoCE".into(), "12.5".into(), "0".into()],
            vec!["GSE".into(), "9.8".into(), "3".into()],
            vec!["short row".into()],
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

#[test]
fn page_structure() {
    let html = render_html("fabricsim report", &sample_sections());
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..40]);
    assert!(html.contains("<meta charset=\"utf-8\">"));
    assert!(html.contains("<style>"));
    assert!(html.contains("<h1>fabricsim report</h1>"));
    assert_eq!(html.matches("<svg").count(), 3, "one <svg per chart");
    assert_eq!(html.matches("</svg>").count(), 3);
    assert_eq!(html.matches("<table>").count(), 1);
    assert_eq!(html.matches("</table>").count(), 1);
    assert_eq!(html.matches("<tr>").count(), 4, "header + 3 rows");
    assert_eq!(html.matches("</tr>").count(), 4);
    assert_eq!(html.matches("<thead>").count(), 1);
    assert_eq!(html.matches("<tbody>").count(), 1);
    // short rows are padded
    assert_eq!(html.matches("<td").count(), 9);
    assert!(html.contains("<td class=\"num\">12.5</td>"));
    assert!(html.contains("<td>RoCE</td>"));
    assert_eq!(html.matches("<p>").count(), 2);
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
    // sections in order
    let order = [
        "<h2>Results",
        "<p>First",
        "Job completion time",
        "Goodput",
        "FCT CDF",
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
        bar_chart_svg(&jct_chart()),
        bar_chart_svg(&throughput_chart()),
        line_chart_svg(&cdf_chart()),
    ] {
        assert!(svg.starts_with("<svg"));
        check_well_formed(&svg).unwrap();
    }
}

#[test]
fn escaping() {
    let nasty = "<b>&\"";
    let mut chart = throughput_chart();
    chart.title = nasty.into();
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
    assert!(html.contains("<title>&lt;b&gt;&amp;&quot;</title>"));
    assert!(html.contains("<h1>&lt;b&gt;&amp;&quot;</h1>"));
    assert!(html.contains("<h2>&lt;b&gt;&amp;&quot;</h2>"));
    assert!(html.contains("<th>&lt;b&gt;&amp;&quot;</th>"));
    assert!(html.contains("aria-label=\"&lt;b&gt;&amp;&quot;\""));
    check_well_formed(&html).unwrap();
    let svg = bar_chart_svg(&chart);
    let texts = svg_texts(&svg);
    assert!(
        texts.iter().filter(|t| *t == nasty).count() >= 4,
        "{texts:?}"
    );
    assert_eq!(escape_html("a'b\u{7}"), "a&#39;b ");
}

#[test]
fn deterministic() {
    let a = render_html("r", &sample_sections());
    let b = render_html("r", &sample_sections());
    assert_eq!(a, b);
    assert_eq!(bar_chart_svg(&jct_chart()), bar_chart_svg(&jct_chart()));
    assert_eq!(line_chart_svg(&cdf_chart()), line_chart_svg(&cdf_chart()));
}

#[test]
fn bar_chart_names_every_category_and_series() {
    for chart in [jct_chart(), throughput_chart()] {
        let texts = svg_texts(&bar_chart_svg(&chart));
        for name in chart
            .categories
            .iter()
            .chain(chart.series.iter().map(|s| &s.0))
        {
            assert!(texts.contains(name), "{name} missing from {texts:?}");
        }
        assert!(texts.contains(&chart.title));
        assert!(texts.contains(&chart.x_label));
        assert!(texts.contains(&chart.y_label));
    }
}

#[test]
fn bars_are_grouped_side_by_side() {
    let svg = bar_chart_svg(&throughput_chart());
    // 2 series x 3 categories = 6 bars + 2 legend swatches, all filled with a
    // palette colour.
    let blue = svg.matches("fill=\"#0072B2\"").count();
    let orange = svg.matches("fill=\"#E69F00\"").count();
    assert_eq!((blue, orange), (4, 4), "{svg}");
    // bars of one group are adjacent and do not overlap: collect x of the rects
    let rects: Vec<(i32, i32, String)> = svg
        .lines()
        .filter(|l| l.starts_with("<rect") && l.contains("fill=\"#"))
        .filter_map(|l| {
            let attr = |k: &str| {
                let i = l.find(&format!(" {k}=\""))? + k.len() + 3;
                let j = l[i..].find('"')?;
                Some(l[i..i + j].to_string())
            };
            Some((
                attr("x")?.parse().ok()?,
                attr("width")?.parse().ok()?,
                attr("fill")?,
            ))
        })
        .filter(|(_, w, _)| *w > 0)
        .collect();
    let mut bars: Vec<_> = rects.iter().filter(|r| r.2 != "#FFFFFF").skip(2).collect();
    assert_eq!(bars.len(), 6, "{rects:?}");
    bars.sort();
    for pair in bars.chunks(2) {
        assert_eq!(pair[0].2, "#0072B2");
        assert_eq!(pair[1].2, "#E69F00");
        assert!(pair[0].0 + pair[0].1 <= pair[1].0);
        assert!(
            pair[1].0 - (pair[0].0 + pair[0].1) < 10,
            "same group: {pair:?}"
        );
    }
    assert!(
        bars[2].0 - (bars[1].0 + bars[1].1) > 30,
        "groups are apart: {bars:?}"
    );
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
            series: vec![("none".into(), vec![None, None, None])],
            log_y: true,
            ..base.clone()
        },
        BarChart {
            series: vec![("bad".into(), vec![Some(0.0), Some(-5.0), Some(f64::NAN)])],
            log_y: true,
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
            ..base.clone()
        },
        BarChart {
            categories: vec!["only".into()],
            series: vec![("one".into(), vec![Some(42.0)])],
            log_y: true,
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
            log_y: true,
        },
        BarChart {
            series: vec![(
                "tiny".into(),
                vec![Some(5e-324), Some(f64::MIN_POSITIVE), Some(1e-310)],
            )],
            log_y: true,
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
            ..base
        },
    ]
}

#[test]
fn edge_cases_do_not_panic() {
    let mut sections = Vec::new();
    for c in edge_bar_charts() {
        let svg = bar_chart_svg(&c);
        assert!(svg.starts_with("<svg"), "{c:?}");
        assert_eq!(svg.matches("<svg").count(), 1);
        check_well_formed(&svg)
            .map_err(|e| format!("{c:?}: {e}"))
            .unwrap();
        sections.push(Section::Bar(c));
    }
    for c in edge_line_charts() {
        let svg = line_chart_svg(&c);
        assert!(svg.starts_with("<svg"), "{c:?}");
        assert_eq!(svg.matches("<svg").count(), 1);
        check_well_formed(&svg)
            .map_err(|e| format!("{c:?}: {e}"))
            .unwrap();
        sections.push(Section::Line(c));
    }
    sections.push(Section::Table(Table::default()));
    sections.push(Section::Text(String::new()));
    sections.push(Section::Heading(String::new()));
    let html = render_html("", &sections);
    let charts = sections
        .iter()
        .filter(|s| matches!(s, Section::Bar(_) | Section::Line(_)))
        .count();
    assert_eq!(html.matches("<svg").count(), charts);
    check_well_formed(&html).unwrap();
}

#[test]
fn no_data_is_said() {
    let c = BarChart {
        series: vec![("none".into(), vec![None, None, None])],
        ..throughput_chart()
    };
    assert!(svg_texts(&bar_chart_svg(&c)).contains(&"no data".to_string()));
    assert!(!svg_texts(&bar_chart_svg(&throughput_chart())).contains(&"no data".to_string()));
    let l = LineChart {
        series: vec![("neg".into(), vec![(-1.0, -1.0)])],
        ..cdf_chart()
    };
    assert!(svg_texts(&line_chart_svg(&l)).contains(&"no data".to_string()));
}

#[test]
fn long_titles_are_shortened_in_charts() {
    let c = LineChart {
        title: "y".repeat(500),
        ..cdf_chart()
    };
    let texts = svg_texts(&line_chart_svg(&c));
    let title = texts.iter().find(|t| t.starts_with("yyy")).unwrap();
    assert!(
        title.chars().count() < 100 && title.ends_with('…'),
        "{title}"
    );
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
        title in ".{0,80}",
        categories in prop::collection::vec(".{0,12}", 0..8),
        series in prop::collection::vec(
            (".{0,12}", prop::collection::vec(prop::option::of(value()), 0..10)), 0..5),
        log_y in any::<bool>(),
    ) {
        let c = BarChart { title, x_label: "x".into(), y_label: "y".into(), categories, series, log_y };
        let svg = bar_chart_svg(&c);
        prop_assert!(svg.starts_with("<svg"));
        prop_assert_eq!(svg.matches("<svg").count(), 1);
        prop_assert_eq!(check_well_formed(&svg), Ok(()));
    }

    #[test]
    fn random_line_charts_render(
        series in prop::collection::vec(
            (".{0,12}", prop::collection::vec((value(), value()), 0..30)), 0..5),
        log_x in any::<bool>(),
        log_y in any::<bool>(),
        step in any::<bool>(),
    ) {
        let c = LineChart { title: "t".into(), x_label: String::new(), y_label: String::new(), series, log_x, log_y, step };
        let svg = line_chart_svg(&c);
        prop_assert!(svg.starts_with("<svg"));
        prop_assert_eq!(svg.matches("<svg").count(), 1);
        prop_assert_eq!(check_well_formed(&svg), Ok(()));
    }

    #[test]
    fn escaped_text_round_trips_through_the_checker(s in any::<String>()) {
        let html = render_html(&s, &[Section::Text(s.clone()), Section::Heading(s.clone())]);
        prop_assert_eq!(check_well_formed(&html), Ok(()));
    }
}
