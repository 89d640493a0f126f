/// The price after a percentage discount, in cents.
pub fn apply_discount(price_cents: u64, percent: u64) -> u64 {
    price_cents - price_cents * percent / 100
} 

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_percent_off() {
        assert_eq!(apply_discount(1000, 10), 900);
    }
}
