//! Travelers, clients and refund beneficiaries: plausible people who can never receive mail.

use chrono::{Months, NaiveDate};
use fake::Fake;
use fake::faker::name::en::{FirstName, LastName};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::models::{ADULT, Beneficiary, Client, Traveler};

/// Reserved for documentation (RFC 2606): no real mailbox is ever written to.
const EMAIL_DOMAINS: [&str; 3] = ["example.com", "example.org", "example.net"];

/// The day a traveler's age is reckoned on so that it holds under every reading: the
/// earlier of the departure and the day before `today` (UTC), since a staging may check age
/// on the request day in a time zone up to a day behind UTC, or on the departure. Ages only
/// grow, so 18 on that day is 18 on every later request day and departure.
pub(super) fn age_reference_day(today: NaiveDate, departure: NaiveDate) -> NaiveDate {
    departure.min(today.pred_opt().unwrap_or(today))
}

/// An adult who is 18 to 85 years old on `on` (see [`age_reference_day`]).
pub(super) fn adult(rng: &mut ChaCha8Rng, on: NaiveDate) -> Traveler {
    let age: u32 = rng.random_range(18..=84);
    let birthday = on
        .checked_sub_months(Months::new(12 * age))
        .expect("date in range");
    // Up to 360 days before the birthday keeps the age on `on` within [age, age + 1).
    let birthdate = birthday - chrono::Duration::days(rng.random_range(0..=360));
    Traveler {
        age_range: ADULT.to_string(),
        birthdate: birthdate.format("%Y-%m-%d").to_string(),
        first_name: FirstName().fake_with_rng(rng),
        last_name: LastName().fake_with_rng(rng),
    }
}

fn ascii_slug(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_lowercase()
}

/// The booker is the first traveler, reachable only at a reserved example domain.
pub(super) fn client(rng: &mut ChaCha8Rng, booker: &Traveler) -> Client {
    let domain = EMAIL_DOMAINS[rng.random_range(0..EMAIL_DOMAINS.len())];
    let tag: u16 = rng.random_range(1..1000);
    Client {
        email: format!(
            "{}.{}{tag}@{domain}",
            ascii_slug(&booker.first_name),
            ascii_slug(&booker.last_name)
        ),
        firstname: booker.first_name.clone(),
        lastname: booker.last_name.clone(),
    }
}

/// Countries beneficiaries bank in: ISO code, a bank code for the BIC, and the BBAN shape
/// (`n` digit, `a` upper-case letter) of that country's IBAN registry entry.
const BANKS: [(&str, &str, &str); 5] = [
    ("DE", "DEUT", "nnnnnnnnnnnnnnnnnn"),
    ("NL", "INGB", "aaaannnnnnnnnn"),
    ("AT", "BKAU", "nnnnnnnnnnnnnnnn"),
    ("FI", "NDEA", "nnnnnnnnnnnnnn"),
    ("GB", "BARC", "aaaannnnnnnnnnnnnn"),
];

/// A refund beneficiary with an IBAN whose mod-97 check digits are right, and a BIC of valid format.
pub(super) fn beneficiary(rng: &mut ChaCha8Rng, holder: &Client) -> Beneficiary {
    let (country, bank, shape) = BANKS[rng.random_range(0..BANKS.len())];
    // Letter positions hold the bank code itself, as real NL and GB account numbers do.
    let mut bank_letters = bank.chars();
    let bban: String = shape
        .chars()
        .map(|kind| match kind {
            'a' => bank_letters.next().unwrap_or('X'),
            _ => char::from(b'0' + rng.random_range(0..10u8)),
        })
        .collect();
    let location: String = (0..2)
        .map(|_| char::from(b'A' + rng.random_range(0..26u8)))
        .collect();
    Beneficiary {
        name: format!("{} {}", holder.firstname, holder.lastname),
        iban: iban(country, &bban),
        bic: format!("{bank}{country}{location}"),
    }
}

/// ISO 13616: the check digits make the rearranged number equal 1 modulo 97.
pub(super) fn iban(country: &str, bban: &str) -> String {
    let rearranged = format!("{bban}{country}00");
    let remainder = rearranged.chars().fold(0u32, |acc, c| {
        let value = c.to_digit(36).expect("alphanumeric");
        if value >= 10 {
            (acc * 100 + value) % 97
        } else {
            (acc * 10 + value) % 97
        }
    });
    format!("{country}{:02}{bban}", 98 - remainder)
}

/// The language a customer from `country` (ISO 3166 alpha-2) most likely reads, as a BCP 47
/// tag; English (`en-GB`) where no single language is obvious.
pub(super) fn language_of(country: &str) -> &'static str {
    match country {
        "FR" => "fr-FR",
        "BE" => "fr-BE",
        "DE" => "de-DE",
        "AT" => "de-AT",
        "CH" => "de-CH",
        "ES" | "AR" | "CO" | "MX" => "es-ES",
        "IT" => "it-IT",
        "NL" => "nl-NL",
        "PT" | "BR" => "pt-PT",
        "PL" => "pl-PL",
        "CZ" => "cs-CZ",
        "DK" => "da-DK",
        "SE" => "sv-SE",
        "NO" => "nb-NO",
        "FI" => "fi-FI",
        "GR" => "el-GR",
        "HU" => "hu-HU",
        "TR" => "tr-TR",
        "JP" => "ja-JP",
        "KR" => "ko-KR",
        "CN" | "HK" => "zh-CN",
        "US" => "en-US",
        "CA" => "en-CA",
        "AU" => "en-AU",
        "NZ" => "en-NZ",
        "IE" => "en-IE",
        _ => "en-GB",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iban_check_digits_match_a_published_example() {
        // The example IBAN of the German registry entry.
        assert_eq!(iban("DE", "370400440532013000"), "DE89370400440532013000");
        assert_eq!(iban("GB", "NWBK60161331926819"), "GB29NWBK60161331926819");
    }
}
