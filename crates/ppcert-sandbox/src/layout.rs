//! Response layouts for the points the spec leaves open (`ppcert serve --unwrapped`,
//! `--contracts-layout`, `--errors`, ...): plain values the options hold and `shape.rs` and the
//! handlers apply.

/// Response layouts for the points the spec leaves open, so clients can be tested against each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Wrap response bodies in `{"data": ...}`.
    pub wrap: bool,
    pub contracts: ContractsLayout,
    /// Success status of PATCH /subscriptions/{bookingNumber}: 200 or 201.
    pub update_status: u16,
    pub price_delta: DeltaShape,
    /// Success status of DELETE /quotes/{id}: 200, 202 or 204.
    pub delete_status: u16,
    pub quote_wrapper: QuoteWrapper,
    /// Each contract element as `{"contract": {...}, "claim": {...}}`.
    pub nested_contract_objects: bool,
    /// Ids as JSON numbers.
    pub integer_ids: bool,
    /// `201` answers (but the quote's) with an empty body.
    pub empty_created: bool,
    pub errors: ErrorShape,
    /// `claimDate` must be a date (`YYYY-MM-DD`); a date-time is refused.
    pub claim_date_day_only: bool,
    /// Success status of POST /contracts/{id}/claims: 201, or 202 (accepted for processing).
    pub claim_status: u16,
    /// A new subscription's answer is an empty `201` whose `Location` names the contract.
    pub location_ids: bool,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            wrap: true,
            contracts: ContractsLayout::ByType,
            update_status: 201,
            claim_status: 201,
            location_ids: false,
            price_delta: DeltaShape::Number,
            delete_status: 204,
            quote_wrapper: QuoteWrapper::None,
            nested_contract_objects: false,
            integer_ids: false,
            empty_created: false,
            errors: ErrorShape::Spec,
            claim_date_day_only: false,
        }
    }
}

/// How GET /subscriptions/{bookingNumber}/contracts groups contracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContractsLayout {
    /// `{"WITHDRAWAL": [...], ...}`
    ByType,
    /// `{"contracts": {"WITHDRAWAL": [...]}}`
    Nested,
    /// `[{"productType": "WITHDRAWAL", ...}]`
    List,
}

/// How `priceDelta` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeltaShape {
    /// `12.5`
    Number,
    /// `"12.50"`
    String,
    /// `{"amount": 12.5, "currency": "EUR"}`
    Object,
    /// `{"currencyCode": "EUR", "units": "12", "nanos": 500000000}` (`google.type.Money`);
    /// prices are written so too.
    UnitsNanos,
}

/// Where the quote answer's fields go, inside the usual `data` wrapper if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QuoteWrapper {
    /// `{"id", "reference", ...}`
    #[default]
    None,
    /// `{"quote": {"id", ...}}`: one wrapper deeper, which the built-in reading follows.
    Quote,
    /// `{"result": {"quote": {"id", ...}}}`: two deeper; a client needs captures.
    ResultQuote,
}

/// How errors are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorShape {
    /// `{"error": {"code", "message", "field"}}`
    #[default]
    Spec,
    /// RFC 9457 `application/problem+json` with `invalid-params`.
    Problem,
}
