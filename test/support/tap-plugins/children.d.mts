// Types of the tap plugins in this folder, read by tap's build of its Test class.
// biome-ignore lint/complexity/noBannedTypes: tap merges a plugin's return type into its Test class; this plugin adds nothing to it
export declare const plugin: () => {};
