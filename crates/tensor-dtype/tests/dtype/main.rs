//! Integration tests of tensor-dtype: strided views against a naive index computation, and the
//! relation between C and Fortran strides.

use proptest::prelude::*;
use tensor_core::ByteOrder;
use tensor_dtype::{Dtype, TensorView, shape};

/// A shape of up to four small dimensions and a permutation of its axes.
fn shape_and_permutation() -> impl Strategy<Value = (Vec<u64>, Vec<usize>)> {
    proptest::collection::vec(1u64..5, 0..5).prop_flat_map(|shape| {
        let n = shape.len();
        (Just(shape), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn permuted_and_reversed_views_gather_like_naive_indexing(
        (shape, perm) in shape_and_permutation(),
        flip in proptest::collection::vec(any::<bool>(), 5),
    ) {
        // A C-contiguous uint16 tensor holding 0, 1, 2, ... viewed with permuted axes, some
        // of them walked backwards.
        let count = shape::element_count(&shape).unwrap();
        let data: Vec<u8> = (0..count as u16).flat_map(u16::to_le_bytes).collect();
        let base = shape::byte_strides(&shape, 2, shape::Order::C).unwrap();
        let vshape: Vec<u64> = perm.iter().map(|&a| shape[a]).collect();
        let mut vstrides: Vec<i64> = perm.iter().map(|&a| base[a]).collect();
        let mut offset = 0i64;
        for (k, s) in vstrides.iter_mut().enumerate() {
            if flip[k] {
                offset += *s * (vshape[k] as i64 - 1);
                *s = -*s;
            }
        }
        let view = TensorView::strided(&data, Dtype::Uint16, &vshape, &vstrides, offset as u64, ByteOrder::Little).unwrap();
        let got = view.typed::<u16>().unwrap();
        // Naive: walk every index of the view in C order.
        let mut expected = Vec::new();
        let mut index = vec![0u64; vshape.len()];
        for _ in 0..count {
            let pos: i64 = offset + index.iter().zip(&vstrides).map(|(&i, &s)| i as i64 * s).sum::<i64>();
            expected.push(u16::from_le_bytes([data[pos as usize], data[pos as usize + 1]]));
            for axis in (0..index.len()).rev() {
                index[axis] += 1;
                if index[axis] < vshape[axis] { break; }
                index[axis] = 0;
            }
        }
        prop_assert_eq!(&*got, expected.as_slice());
    }

    #[test]
    fn fortran_strides_are_c_strides_of_the_reversed_shape(shape in proptest::collection::vec(0u64..1000, 0..6)) {
        let mut reversed = shape.clone();
        reversed.reverse();
        let mut c = shape::c_strides(&reversed).unwrap();
        c.reverse();
        prop_assert_eq!(shape::f_strides(&shape).unwrap(), c);
    }

    #[test]
    fn views_refuse_buffers_of_the_wrong_size(shape in proptest::collection::vec(0u64..6, 0..4), extra in 1usize..9) {
        let n = shape::byte_len(Dtype::Float32, &shape).unwrap() as usize;
        let buf = vec![0u8; n + extra];
        prop_assert!(TensorView::new(&buf[..n], Dtype::Float32, &shape, ByteOrder::Little).is_ok());
        prop_assert!(TensorView::new(&buf, Dtype::Float32, &shape, ByteOrder::Little).is_err());
    }
}
