/** The native core's crate folder. */
export declare const CRATE: string;
/** The SHA-256 (hex) of what the native core is built from. */
export declare function sourceDigest(): string;
