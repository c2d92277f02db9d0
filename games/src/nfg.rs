//! Gambit `.nfg` files: both body formats (payoff list and outcome list), rational payoffs.
//!
//! ```text
//! NFG 1 R "Matching pennies" { "Row" "Column" } { 2 2 }
//! 1 -1 -1 1 -1 1 1 -1
//! ```
//! Profiles are listed with player 1's strategy changing fastest.

use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use num_rational::BigRational;
use num_traits::ToPrimitive;

use crate::error::{Error, Result};
use crate::normal_form::NormalFormGame;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Open,
    Close,
}

fn tokenize(text: &str) -> Result<Vec<(Token, usize)>> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while let Some(&c) = chars.peek() {
        match c {
            '\n' => {
                line += 1;
                chars.next();
            }
            c if c.is_whitespace() || c == ',' => {
                chars.next();
            }
            '{' => {
                tokens.push((Token::Open, line));
                chars.next();
            }
            '}' => {
                tokens.push((Token::Close, line));
                chars.next();
            }
            '"' => {
                let start = line;
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next() {
                        None => return Err(nfg_err(start, "unterminated string")),
                        Some('\\') => {
                            if let Some(e) = chars.next() {
                                s.push(e);
                            }
                        }
                        Some('"') => break,
                        Some(ch) => {
                            if ch == '\n' {
                                line += 1;
                            }
                            s.push(ch);
                        }
                    }
                }
                tokens.push((Token::Quoted(s), start));
            }
            _ => {
                let mut s = String::new();
                while let Some(&ch) = chars.peek() {
                    if ch.is_whitespace() || matches!(ch, '{' | '}' | '"' | ',') {
                        break;
                    }
                    s.push(ch);
                    chars.next();
                }
                tokens.push((Token::Word(s), line));
            }
        }
    }
    Ok(tokens)
}

fn nfg_err(line: usize, reason: impl Into<String>) -> Error {
    Error::Nfg { line, reason: reason.into() }
}

/// Parse a number as Gambit writes it: integer, decimal (`0.25`, `1e-3`) or rational (`1/3`).
fn parse_number(word: &str, line: usize) -> Result<f64> {
    let bad = || nfg_err(line, format!("`{word}` is not a number"));
    let value = if let Some((num, den)) = word.split_once('/') {
        let num: num_bigint::BigInt = num.parse().map_err(|_| bad())?;
        let den: num_bigint::BigInt = den.parse().map_err(|_| bad())?;
        if den == num_bigint::BigInt::from(0) {
            return Err(nfg_err(line, format!("`{word}` divides by zero")));
        }
        BigRational::new(num, den).to_f64().ok_or_else(bad)?
    } else {
        word.parse::<f64>().map_err(|_| bad())?
    };
    if !value.is_finite() {
        return Err(nfg_err(line, format!("`{word}` is not finite")));
    }
    Ok(value)
}

struct Cursor {
    tokens: Vec<(Token, usize)>,
    pos: usize,
}

impl Cursor {
    fn line(&self) -> usize {
        self.tokens.get(self.pos).or(self.tokens.last()).map_or(1, |t| t.1)
    }
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|t| &t.0)
    }
    fn next(&mut self, what: &str) -> Result<Token> {
        let t = self
            .tokens
            .get(self.pos)
            .cloned()
            .ok_or_else(|| nfg_err(self.line(), format!("unexpected end of file, expected {what}")))?;
        self.pos += 1;
        Ok(t.0)
    }
    fn expect(&mut self, token: Token, what: &str) -> Result<()> {
        let line = self.line();
        let t = self.next(what)?;
        if t == token { Ok(()) } else { Err(nfg_err(line, format!("expected {what}, found {t:?}"))) }
    }
    fn quoted(&mut self, what: &str) -> Result<String> {
        let line = self.line();
        match self.next(what)? {
            Token::Quoted(s) => Ok(s),
            t => Err(nfg_err(line, format!("expected {what}, found {t:?}"))),
        }
    }
    fn number(&mut self) -> Result<f64> {
        let line = self.line();
        match self.next("a number")? {
            Token::Word(w) => parse_number(&w, line),
            t => Err(nfg_err(line, format!("expected a number, found {t:?}"))),
        }
    }
}

/// Read a game from the text of a Gambit `.nfg` file.
///
/// # Errors
///
/// [`Error::Nfg`] with the line of the first problem; the errors of [`NormalFormGame::new`].
pub fn from_nfg_str(text: &str) -> Result<NormalFormGame> {
    let mut c = Cursor { tokens: tokenize(text)?, pos: 0 };
    c.expect(Token::Word("NFG".into()), "`NFG` at the start")?;
    c.expect(Token::Word("1".into()), "version 1")?;
    let line = c.line();
    match c.next("`R` or `D`")? {
        Token::Word(w) if w == "R" || w == "D" => {}
        t => return Err(nfg_err(line, format!("expected `R` or `D`, found {t:?}"))),
    }
    let title = c.quoted("the title string")?;
    c.expect(Token::Open, "`{` before the player names")?;
    let mut players = Vec::new();
    while let Some(Token::Quoted(_)) = c.peek() {
        players.push(c.quoted("a player name")?);
    }
    c.expect(Token::Close, "`}` after the player names")?;
    if players.len() < 2 {
        return Err(nfg_err(c.line(), "a game needs at least 2 players"));
    }

    c.expect(Token::Open, "`{` before the strategy counts")?;
    let mut strategies: Vec<Vec<String>> = Vec::new();
    for _ in 0..players.len() {
        let line = c.line();
        match c.next("a strategy count or list")? {
            Token::Word(w) => {
                let k: usize =
                    w.parse().map_err(|_| nfg_err(line, format!("`{w}` is not a strategy count")))?;
                if k == 0 {
                    return Err(nfg_err(line, "a player has no strategy"));
                }
                strategies.push((1..=k).map(|s| s.to_string()).collect());
            }
            Token::Open => {
                let mut names = Vec::new();
                while let Some(Token::Quoted(_)) = c.peek() {
                    names.push(c.quoted("a strategy name")?);
                }
                c.expect(Token::Close, "`}` after the strategy names")?;
                if names.is_empty() {
                    return Err(nfg_err(line, "a player has no strategy"));
                }
                strategies.push(names);
            }
            t => return Err(nfg_err(line, format!("expected a strategy count, found {t:?}"))),
        }
    }
    c.expect(Token::Close, "`}` after the strategies")?;
    if let Some(Token::Quoted(_)) = c.peek() {
        c.quoted("a comment")?;
    }

    let n = players.len();
    let shape: Vec<usize> = strategies.iter().map(Vec::len).collect();
    let num_profiles: usize = shape.iter().product();
    let mut flat: Vec<Vec<f64>> = vec![Vec::with_capacity(num_profiles); n];

    if c.peek() == Some(&Token::Open) {
        // Outcome list, then one outcome number per profile (0 = all payoffs zero).
        c.expect(Token::Open, "`{` before the outcomes")?;
        let mut outcomes: Vec<Vec<f64>> = Vec::new();
        while c.peek() == Some(&Token::Open) {
            c.expect(Token::Open, "`{` of an outcome")?;
            c.quoted("the outcome's name")?;
            let payoffs = (0..n).map(|_| c.number()).collect::<Result<Vec<_>>>()?;
            c.expect(Token::Close, "`}` after an outcome's payoffs")?;
            outcomes.push(payoffs);
        }
        c.expect(Token::Close, "`}` after the outcomes")?;
        for _ in 0..num_profiles {
            let line = c.line();
            let k = match c.next("an outcome number")? {
                Token::Word(w) => w
                    .parse::<usize>()
                    .map_err(|_| nfg_err(line, format!("`{w}` is not an outcome number")))?,
                t => return Err(nfg_err(line, format!("expected an outcome number, found {t:?}"))),
            };
            let payoffs = match k {
                0 => vec![0.0; n],
                k => outcomes
                    .get(k - 1)
                    .cloned()
                    .ok_or_else(|| nfg_err(line, format!("outcome {k} does not exist")))?,
            };
            for (p, v) in payoffs.into_iter().enumerate() {
                flat[p].push(v);
            }
        }
    } else {
        for _ in 0..num_profiles {
            for column in flat.iter_mut() {
                column.push(c.number()?);
            }
        }
    }
    if c.peek().is_some() {
        return Err(nfg_err(c.line(), "unexpected text after the payoffs"));
    }

    // Gambit lists player 1 fastest: that is column-major (Fortran) order.
    let tensors = flat
        .into_iter()
        .map(|v| {
            ArrayD::from_shape_vec(IxDyn(&shape).f(), v).map_err(|e| nfg_err(1, format!("payoff count: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    NormalFormGame::new(tensors)?.with_title(title).with_names(players, strategies)
}

/// Read a `.nfg` file.
///
/// # Errors
///
/// [`Error::Io`] if it cannot be read; otherwise as [`from_nfg_str`].
pub fn read_nfg(path: &std::path::Path) -> Result<NormalFormGame> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.into(), source })?;
    from_nfg_str(&text)
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Write a game in the payoff-list format (payoffs printed exactly with `{}` of f64).
pub fn to_nfg_string(game: &NormalFormGame) -> String {
    let mut out = format!("NFG 1 R {} {{ ", quote(game.title()));
    for p in game.player_names() {
        out.push_str(&quote(p));
        out.push(' ');
    }
    out.push_str("}\n{ ");
    for names in game.strategy_names() {
        out.push_str("{ ");
        for s in names {
            out.push_str(&quote(s));
            out.push(' ');
        }
        out.push_str("} ");
    }
    out.push_str("}\n\"\"\n\n");
    let shape = game.shape().to_vec();
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..game.num_profiles() {
        let line: Vec<String> =
            (0..game.num_players()).map(|p| format!("{}", game.payoff(p, &idx))).collect();
        out.push_str(&line.join(" "));
        out.push('\n');
        // Player 1 (axis 0) fastest.
        for (axis, i) in idx.iter_mut().enumerate() {
            *i += 1;
            if *i < shape[axis] {
                break;
            }
            *i = 0;
        }
    }
    out
}
