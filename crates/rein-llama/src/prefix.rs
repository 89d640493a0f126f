//! Which part of a new prompt the KV cache already holds.

/// How many leading items `a` and `b` share.
pub fn common_prefix<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Returns how many leading tokens of `new` can be kept from `cached`.
///
/// At least one token is always left to decode: sampling needs the logits of the prompt's last
/// position, and those are only produced by decoding it.
pub fn reuse_prefix<T: PartialEq>(cached: &[T], new: &[T]) -> usize {
    let common = common_prefix(cached, new);
    if common == new.len() {
        common.saturating_sub(1)
    } else {
        common
    }
}

#[cfg(test)]
mod tests {
    use super::reuse_prefix;

    #[test]
    fn keeps_the_longest_common_prefix() {
        assert_eq!(reuse_prefix(&[1, 2, 3, 4], &[1, 2, 3, 9, 9]), 3);
    }

    #[test]
    fn nothing_is_kept_when_the_first_token_differs() {
        assert_eq!(reuse_prefix(&[5, 2, 3], &[1, 2, 3]), 0);
        assert_eq!(reuse_prefix::<i32>(&[], &[1, 2]), 0);
    }

    #[test]
    fn an_identical_prompt_still_decodes_its_last_token() {
        assert_eq!(reuse_prefix(&[1, 2, 3], &[1, 2, 3]), 2);
        assert_eq!(reuse_prefix(&[1], &[1]), 0);
    }

    #[test]
    fn a_shorter_prompt_that_is_a_prefix_keeps_all_but_its_last() {
        assert_eq!(reuse_prefix(&[1, 2, 3, 4, 5], &[1, 2, 3]), 2);
    }

    #[test]
    fn a_longer_prompt_keeps_everything_cached() {
        assert_eq!(reuse_prefix(&[1, 2, 3], &[1, 2, 3, 4, 5]), 3);
    }
}
