"""HMAC_DRBG(SHA-256) against NIST CAVP known-answer vectors (no prediction resistance).

Sources, transcribed by hand:
- ``drbgvectors_no_reseed/HMAC_DRBG.rsp`` [SHA-256], NIST CAVS 14.3, as shipped in Mbed TLS
  ``tests/suites/test_suite_hmac_drbg.no_reseed.data`` (entries "HMAC_DRBG NIST CAVS 14.3 No
  Reseed (SHA-256,256+128,P,A) #n", where P/A are the personalization/additional-input bit
  lengths). Mbed TLS stores EntropyInput || Nonce as one 48-byte field.
- ``drbgvectors_pr_false/HMAC_DRBG.rsp`` [SHA-256], COUNT = 0, including the intermediate
  (V, Key) after each step, as quoted in BoringSSL's HMAC_DRBG Go test (hmac_drbg_test.go).

The CAVP procedure: instantiate, (reseed), generate ReturnedBitsLen = 1024 bits twice (each
call with its own AdditionalInput) and compare the second output.
"""

from __future__ import annotations

import pytest

from openpoker.shuffle.drbg import MAX_BYTES_PER_REQUEST, HmacDrbg
from openpoker.shuffle.errors import DrbgError

NO_RESEED = [
    # (name, entropy || nonce, personalization, additional 1, additional 2, returned bits)
    (
        "0,0 #0",
        "ca851911349384bffe89de1cbdc46e6831e44d34a4fb935ee285dd14b71a7488659ba96c601dc69fc902940805ec0ca8",
        "",
        "",
        "",
        "e528e9abf2dece54d47c7e75e5fe302149f817ea9fb4bee6f4199697d04d5b89d54fbb978a15b5c443c9ec21036d2460"
        "b6f73ebad0dc2aba6e624abf07745bc107694bb7547bb0995f70de25d6b29e2d3011bb19d27676c07162c8b5ccde0668"
        "961df86803482cb37ed6d5c0bb8d50cf1f50d476aa0458bdaba806f48be9dcb8",
    ),
    (
        "0,0 #1",
        "79737479ba4e7642a221fcfd1b820b134e9e3540a35bb48ffae29c20f5418ea33593259c092bef4129bc2c6c9e19f343",
        "",
        "",
        "",
        "cf5ad5984f9e43917aa9087380dac46e410ddc8a7731859c84e9d0f31bd43655b924159413e2293b17610f211e09f770"
        "f172b8fb693a35b85d3b9e5e63b1dc252ac0e115002e9bedfb4b5b6fd43f33b8e0eafb2d072e1a6fee1f159df9b51e6c"
        "8da737e60d5032dd30544ec51558c6f080bdbdab1de8a939e961e06b5f1aca37",
    ),
    (
        "256,0 #0",
        "5cacc68165a2e2ee20812f35ec73a79dbf30fd475476ac0c44fc6174cdac2b556f885496c1e63af620becd9e71ecb824",
        "e72dd8590d4ed5295515c35ed6199e9d211b8f069b3058caa6670b96ef1208d0",
        "",
        "",
        "f1012cf543f94533df27fedfbf58e5b79a3dc517a9c402bdbfc9a0c0f721f9d53faf4aafdc4b8f7a1b580fcaa52338d4"
        "bd95f58966a243cdcd3f446ed4bc546d9f607b190dd69954450d16cd0e2d6437067d8b44d19a6af7a7cfa8794e5fbd72"
        "8e8fb2f2e8db5dd4ff1aa275f35886098e80ff844886060da8b1e7137846b23b",
    ),
    (
        "256,0 #1",
        "8df013b4d103523073917ddf6a869793059e9943fc8654549e7ab22f7c29f122da2625af2ddd4abcce3cf4fa4659d84e",
        "b571e66d7c338bc07b76ad3757bb2f9452bf7e07437ae8581ce7bc7c3ac651a9",
        "",
        "",
        "b91cba4cc84fa25df8610b81b641402768a2097234932e37d590b1154cbd23f97452e310e291c45146147f0da2d81761"
        "fe90fba64f94419c0f662b28c1ed94da487bb7e73eec798fbcf981b791d1be4f177a8907aa3c401643a5b62b87b89d66"
        "b3a60e40d4a8e4e9d82af6d2700e6f535cdb51f75c321729103741030ccc3a56",
    ),
    (
        "0,256 #2",
        "0f2f23d64f481cabec7abb01db3aabf125c3173a044b9bf26844300b69dcac8b9a5ae13232b43aa19cfe8d7958b4b590",
        "",
        "ec4c7a62acab73385f567da10e892ff395a0929f959231a5628188ce0c26e818",
        "6b97b8c6b6bb8935e676c410c17caa8042aa3145f856d0a32b641e4ae5298648",
        "7480a361058bd9afa3db82c9d7586e42269102013f6ec5c269b6d05f17987847748684766b44918fd4b65e1648622fc0"
        "e0954178b0279dfc9fa99b66c6f53e51c4860131e9e0644287a4afe4ca8e480417e070db68008a97c3397e4b320b5d1a"
        "1d7e1d18a95cfedd7d1e74997052bf649d132deb9ec53aae7dafdab55e6dae93",
    ),
]


@pytest.mark.parametrize("case", NO_RESEED, ids=[c[0] for c in NO_RESEED])
def test_cavp_no_reseed(case: tuple[str, str, str, str, str, str]) -> None:
    name, seed, pers, add1, add2, expected = case
    material = bytes.fromhex(seed)
    drbg = HmacDrbg.instantiate(material[:32], material[32:], bytes.fromhex(pers))
    drbg.generate(128, bytes.fromhex(add1))
    assert drbg.generate(128, bytes.fromhex(add2)).hex() == expected, name


def test_cavp_pr_false_with_reseed_and_intermediate_states() -> None:
    drbg = HmacDrbg.instantiate(
        bytes.fromhex("06032cd5eed33f39265f49ecb142c511da9aff2af71203bffaf34a9ca5bd9c0d"),
        bytes.fromhex("0e66f71edc43e42a45ad3c6fc6cdc4df"),
    )
    key, v = drbg.state()
    assert v.hex() == "81e0d8830ed2d16f9b288a1cb289c5fab3f3c5c28131be7cafedcc7734604d34"
    assert key.hex() == "17dc11c2389f5eeb9d0f6a5148a1ea83ee8a828f4f140ac78272a0da435fa121"
    drbg.reseed(bytes.fromhex("01920a4e669ed3a85ae8a33b35a74ad7fb2a6bb4cf395ce00334a9c9a5a5d552"))
    key, v = drbg.state()
    assert v.hex() == "c246fa97570ba2b9d9e5b453fe4632366f146fbd8491146563eb463c9eafe50c"
    assert key.hex() == "ca43e73325de43c41d7e0a7a3163fb04061b09fcee4c7b8884e969e3bdfdff9a"
    drbg.generate(128)
    key, v = drbg.state()
    assert v.hex() == "df67d0816d6a8f3b73ba7638ea113bef0e33a1da451272ef1472211fb31c1cd6"
    assert key.hex() == "8be4c7f9f249d5af2c6345a8f07af14be1d7adc2b9892286ffe37760d8aa5a1b"
    out = drbg.generate(128)
    assert out.hex() == (
        "76fc79fe9b50beccc991a11b5635783a83536add03c157fb30645e611c2898bb2b1bc215000209208cd506cb28da2a51"
        "bdb03826aaf2bd2335d576d519160842e7158ad0949d1a9ec3e66ea1b1a064b005de914eac2e9d4f2d72a8616a802254"
        "22918250ff66a41bd2f864a6a38cc5b6499dc43f7f2bd09e1e0f8f5885935124"
    )
    key, v = drbg.state()
    assert v.hex() == "80524881711e89a61e6fe7169581e50fb9ad642f3dff48fba5773352fa04cec3"
    assert key.hex() == "5ed31bc06cc4f3a97f7f34929b0558b0c34de1f4bd1cef456a8364140e2d9f41"
    assert drbg.reseed_counter == 3


def test_short_entropy_is_refused() -> None:
    with pytest.raises(DrbgError):
        HmacDrbg.instantiate(b"\x00" * 31, b"nonce")
    drbg = HmacDrbg.instantiate(b"\x00" * 32, b"nonce")
    with pytest.raises(DrbgError):
        drbg.reseed(b"\x00" * 16)


def test_request_limit() -> None:
    drbg = HmacDrbg.instantiate(b"\x01" * 32, b"nonce")
    assert len(drbg.generate(MAX_BYTES_PER_REQUEST)) == MAX_BYTES_PER_REQUEST
    with pytest.raises(DrbgError):
        drbg.generate(MAX_BYTES_PER_REQUEST + 1)


def test_generate_lengths_are_prefixes_of_one_call() -> None:
    # Within one Generate call the output is V_1 || V_2 || ..., truncated: a shorter request is
    # a prefix of a longer one from the same state.
    a = HmacDrbg.instantiate(b"\x02" * 32, b"n")
    b = HmacDrbg.instantiate(b"\x02" * 32, b"n")
    assert b.generate(100)[:37] == a.generate(37)
