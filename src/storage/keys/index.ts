/** Keys for encryption at rest: the KeyProvider interface and the local keyring file. */
export type { KeyContext, KeyProvider, WrappedKey } from "./key-provider.js";
export { LocalKeyring } from "./local-keyring.js";
