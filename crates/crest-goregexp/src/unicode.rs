//! The character data Go's parser uses, as Go 1.23's `unicode` package holds it (Unicode
//! 15.0.0): the general categories and scripts `\p{..}` names, simple case folding orbits
//! (`unicode.SimpleFold`), and the Perl (`\d`) and POSIX (`[:alpha:]`) classes.
//!
//! The Unicode tables come from `regex-syntax` (a newer Unicode version), restricted to the code
//! points Unicode 15.0 had assigned, so `\p{L}` holds what Go's `unicode.L` holds. Classes are
//! Go's rune slices: `[lo0, hi0, lo1, hi1, ...]`, surrogates included.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};

pub(crate) const MAX_RUNE: u32 = 0x10FFFF;
/// The smallest and largest runes with a non-trivial case folding orbit (Go's `minFold`,
/// `maxFold`).
pub(crate) const MIN_FOLD: u32 = 0x0041;
pub(crate) const MAX_FOLD: u32 = 0x1E943;

/// Go's `unicode.Categories` keys.
const CATEGORIES: [&str; 36] = [
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
    "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So",
    "Z", "Zl", "Zp", "Zs",
];

/// Go's `unicode.Scripts` keys (Unicode 15.0).
const SCRIPTS: [&str; 163] = [
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];

/// The code points of a `regex-syntax` class expression as rune pairs.
fn ucd(expr: &str) -> Vec<u32> {
    let Ok(hir) = regex_syntax::ParserBuilder::new().build().parse(expr) else {
        return vec![];
    };
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .flat_map(|r| [r.start() as u32, r.end() as u32])
            .collect(),
        HirKind::Literal(lit) => std::str::from_utf8(&lit.0)
            .ok()
            .and_then(|s| s.chars().next())
            .map(|c| vec![c as u32, c as u32])
            .unwrap_or_default(),
        _ => vec![],
    }
}

/// The code points Unicode 15.0 had assigned (`Age <= 15.0`).
fn assigned_15() -> &'static [u32] {
    static AGE: OnceLock<Vec<u32>> = OnceLock::new();
    AGE.get_or_init(|| ucd(r"\p{age=15.0}"))
}

pub(crate) fn in_class(r: u32, class: &[u32]) -> bool {
    let n = class.len() / 2;
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if r > class[2 * mid + 1] {
            lo = mid + 1;
        } else if r < class[2 * mid] {
            hi = mid;
        } else {
            return true;
        }
    }
    false
}

/// The intersection of two clean classes.
fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = vec![];
    let (mut i, mut j) = (0, 0);
    while i + 1 < a.len() && j + 1 < b.len() {
        let lo = a[i].max(b[j]);
        let hi = a[i + 1].min(b[j + 1]);
        if lo <= hi {
            out.extend([lo, hi]);
        }
        if a[i + 1] < b[j + 1] {
            i += 2;
        } else {
            j += 2;
        }
    }
    out
}

/// A `\p{..}` table: its runes and the same closed under simple case folding (Go's table
/// together with its `FoldCategory` / `FoldScript` entry).
pub(crate) struct Table {
    pub runes: Vec<u32>,
    pub folded: Vec<u32>,
}

fn build_table(name: &str) -> Option<Table> {
    let runes = if name == "Any" {
        vec![0, MAX_RUNE]
    } else if name == "Cs" {
        vec![0xD800, 0xDFFF]
    } else if name == "C" {
        // Go's C is Cc, Cf, Co and Cs (no unassigned code points).
        let mut r = intersect(&ucd(r"[\p{gc=Cc}\p{gc=Cf}\p{gc=Co}]"), assigned_15());
        r.extend([0xD800, 0xDFFF]);
        clean_class(&mut r);
        r
    } else if CATEGORIES.contains(&name) {
        intersect(&ucd(&format!(r"\p{{gc={name}}}")), assigned_15())
    } else if SCRIPTS.contains(&name) {
        intersect(&ucd(&format!(r"\p{{sc={name}}}")), assigned_15())
    } else {
        return None;
    };
    let folded = fold_closure(&runes);
    Some(Table { runes, folded })
}

/// Go's `unicodeTable`: the table `\p{name}` names (Go 1.23: "Any", a category or a script;
/// names are case-sensitive).
pub(crate) fn unicode_table(name: &str) -> Option<Arc<Table>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Table>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(t) = cache.lock().ok()?.get(name) {
        return Some(t.clone());
    }
    let table = Arc::new(build_table(name)?);
    if let Ok(mut c) = cache.lock() {
        c.insert(name.to_string(), table.clone());
    }
    Some(table)
}

/// Every rune with a non-trivial simple case folding orbit, sorted, with the next rune of its
/// orbit (`unicode.SimpleFold`).
fn fold_orbits() -> &'static [(u32, u32)] {
    static ORBITS: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    ORBITS.get_or_init(|| {
        let age = assigned_15();
        let mut next: Vec<(u32, u32)> = vec![];
        let mut seen = std::collections::HashSet::new();
        let candidates = ucd(r"[\p{CWCM}\p{CWCF}]");
        for pair in candidates.chunks(2) {
            for c in pair[0]..=pair[1] {
                if seen.contains(&c) || !in_class(c, age) {
                    continue;
                }
                let Some(ch) = char::from_u32(c) else {
                    continue;
                };
                let mut class = ClassUnicode::new([ClassUnicodeRange::new(ch, ch)]);
                class.case_fold_simple();
                let mut orbit: Vec<u32> = class
                    .iter()
                    .flat_map(|r| r.start() as u32..=r.end() as u32)
                    .filter(|&m| in_class(m, age))
                    .collect();
                orbit.sort_unstable();
                orbit.dedup();
                if orbit.len() < 2 {
                    continue;
                }
                // SimpleFold: the next larger member, wrapping to the smallest.
                for (i, &m) in orbit.iter().enumerate() {
                    seen.insert(m);
                    next.push((m, orbit[(i + 1) % orbit.len()]));
                }
            }
        }
        next.sort_unstable();
        next.dedup_by_key(|e| e.0);
        next
    })
}

/// Go's `unicode.SimpleFold`.
pub(crate) fn simple_fold(r: u32) -> u32 {
    let orbits = fold_orbits();
    match orbits.binary_search_by_key(&r, |e| e.0) {
        Ok(i) => orbits[i].1,
        Err(_) => r,
    }
}

/// A clean class with every rune's case folding orbit added (clean).
pub(crate) fn fold_closure(class: &[u32]) -> Vec<u32> {
    let mut out = class.to_vec();
    for &(r, next) in fold_orbits() {
        if !in_class(r, class) {
            continue;
        }
        let mut f = next;
        while f != r {
            if !in_class(f, class) {
                out.extend([f, f]);
            }
            f = simple_fold(f);
        }
    }
    clean_class(&mut out);
    out
}

/// A Perl or POSIX class: its sign (+1, or -1 for the negated form) and runes.
pub(crate) type Group = (i32, &'static [u32]);

const DIGIT: &[u32] = &[0x30, 0x39];
const SPACE: &[u32] = &[0x9, 0xa, 0xc, 0xd, 0x20, 0x20];
const WORD: &[u32] = &[0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];

/// `\d`, `\s`, `\w` and their upper-case negations (Go's `perlGroup`).
pub(crate) fn perl_group(c: u8) -> Option<Group> {
    Some(match c {
        b'd' => (1, DIGIT),
        b'D' => (-1, DIGIT),
        b's' => (1, SPACE),
        b'S' => (-1, SPACE),
        b'w' => (1, WORD),
        b'W' => (-1, WORD),
        _ => return None,
    })
}

/// `[:name:]` and `[:^name:]` (Go's `posixGroup`); `name` includes the brackets and colons.
pub(crate) fn posix_group(name: &str) -> Option<Group> {
    let inner = name.strip_prefix("[:")?.strip_suffix(":]")?;
    let (sign, inner) = match inner.strip_prefix('^') {
        Some(rest) => (-1, rest),
        None => (1, inner),
    };
    let class: &'static [u32] = match inner {
        "alnum" => &[0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a],
        "alpha" => &[0x41, 0x5a, 0x61, 0x7a],
        "ascii" => &[0x0, 0x7f],
        "blank" => &[0x9, 0x9, 0x20, 0x20],
        "cntrl" => &[0x0, 0x1f, 0x7f, 0x7f],
        "digit" => DIGIT,
        "graph" => &[0x21, 0x7e],
        "lower" => &[0x61, 0x7a],
        "print" => &[0x20, 0x7e],
        "punct" => &[0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e],
        "space" => &[0x9, 0xd, 0x20, 0x20],
        "upper" => &[0x41, 0x5a],
        "word" => WORD,
        "xdigit" => &[0x30, 0x39, 0x41, 0x46, 0x61, 0x66],
        _ => return None,
    };
    Some((sign, class))
}

/// Sorts the ranges of a class and merges overlapping and abutting ones.
pub(crate) fn clean_class(r: &mut Vec<u32>) {
    let mut pairs: Vec<(u32, u32)> = r.chunks(2).map(|p| (p[0], p[1])).collect();
    // Low end ascending, high end descending for ties.
    pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    r.clear();
    for (lo, hi) in pairs {
        if let Some(last) = r.last_mut() {
            if lo <= last.saturating_add(1) {
                if hi > *last {
                    *last = hi;
                }
                continue;
            }
        }
        r.extend([lo, hi]);
    }
}
