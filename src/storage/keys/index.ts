/**
 * Encryption at rest as the rest of the code sees it: the KeyProvider
 * interface, the local keyring file, and which AES-256-GCM seals
 * (`aeadImplementation`: the native addon or node:crypto).
 */

export {
  type AeadImplementation,
  nativeAeadReady as aeadImplementation,
} from "../seal/native-aead.js";
export type { KeyContext, KeyProvider, WrappedKey } from "./key-provider.js";
export { LocalKeyring } from "./local-keyring.js";
