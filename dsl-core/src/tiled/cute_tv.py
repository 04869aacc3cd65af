# Expected TV layouts for dsl-core/src/tiled/tests.rs: CuTe's formulas (mma_atom.hpp, copy_atom.hpp)
# written out in Python over pycute's layout algebra (pip nvidia-cutlass). Run: python3 cute_tv.py
from pycute import *

def L(s, d=None): return Layout(s, d)
def mode(l, i): return l[i]

atom_shape = (16, 8, 16)
thr_id = L(32, 1)
A_TV = L(((4,8),(2,2,2)), ((32,1),(16,8,128)))
B_TV = L(((4,8),(2,2)), ((16,1),(8,64)))
C_TV = L(((4,8),(2,2)), ((32,1),(16,8)))
thr_vmnk = tiled_product(thr_id, L((2,2,1)))
perm = (L(32,1), L(32,1), L(16,1))

def thrfrg(t, i, j, atv):
    t_tensor = logical_divide(t, (perm[i], perm[j]))
    a_tensor = zipped_divide(t_tensor, (L(atom_shape[i]), L(atom_shape[j])))
    tv = composition(a_tensor, (atv, None))
    # zipped_divide(tv, (_, (ThrX, ThrY))): CuTe's zip2_by splits the kept mode 0 into its two
    # halves, pairing (ThrV, tiles) and (FrgV, rests).
    d = zipped_divide(tv[1], (L(size(mode(thr_vmnk, i+1))), L(size(mode(thr_vmnk, j+1)))))
    return make_layout(make_layout(tv[0][0], d[0]), make_layout(tv[0][1], d[1]))

def thridx_2_thrid():
    full = make_layout(thr_vmnk, complement(thr_vmnk))
    return composition(L((size(thr_vmnk), 1), (1, 0)), right_inverse(full))

def layout_c_tv():
    ref = L((32, 32))
    return composition(thrfrg(ref, 0, 1, C_TV), (thridx_2_thrid(), None))

def layout_a_tv():
    ref = L((32, 16))
    atile = (None, (L((size(mode(thr_vmnk,1)), size(mode(thr_vmnk,2))), (1, 0)), None))
    t = composition(thrfrg(ref, 0, 2, A_TV), (atile, None))
    return composition(t, (thridx_2_thrid(), None))

def layout_b_tv():
    ref = L((32, 16))
    btile = (None, (L((size(mode(thr_vmnk,1)), size(mode(thr_vmnk,2))), (0, 1)), None))
    t = composition(thrfrg(ref, 1, 2, B_TV), (btile, None))
    return composition(t, (thridx_2_thrid(), None))

def raked_product(a, b):
    # rank-2 a and b: zip(get<1>(logical_product), get<0>(...))
    p = logical_product(a, b)
    a0, b0 = p[0], p[1]
    return make_layout(make_layout(b0[0], a0[0]), make_layout(b0[1], a0[1]))

def g2s_tv():
    thr = L((32,4),(4,1)); val = L((1,8))
    mn = raked_product(thr, val)
    return composition(right_inverse(mn), L((size(thr), size(val))))

for name, f in [("C_TV", layout_c_tv), ("A_TV", layout_a_tv), ("B_TV", layout_b_tv), ("G2S_TV", g2s_tv)]:
    print(name, f())
print("thr_vmnk", thr_vmnk)

def s2r_a_tv(side):
    layout_tv = layout_a_tv()
    ref = L((32,(2,4)),(2,(1,64)))
    src = L((32,8),(8,1))
    trg = src if side == "S" else ref
    atom_tv = zipped_divide(layout_tv, (L(32), L(8)))
    ref2trg = composition(right_inverse(ref), trg)
    t = composition(atom_tv, (ref2trg, None))
    z = make_layout(make_layout(t[0][0], t[1][0]), make_layout(t[0][1], t[1][1]))
    thrval2mn = coalesce(z, (1, (1, 1)))
    ref_s = L(((32, 16), 1))
    tv = composition(ref_s, (thrval2mn, None))
    return make_layout(tv[0][0], tv[0][1])

print("S2R_A_S_TV", s2r_a_tv("S"))
print("S2R_A_D_TV", s2r_a_tv("D"))
