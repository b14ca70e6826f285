// Types of the tap plugins in this folder, read by tap's build of its Test class.
export declare const loader: string;
export declare const importLoader: string;
export declare const preload: boolean;
export declare const testFileExtensions: string[];
// biome-ignore lint/complexity/noBannedTypes: tap merges a plugin's return type into its Test class; this plugin adds nothing to it
export declare const plugin: () => {};
