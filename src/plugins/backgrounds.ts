// Which input types can run as a background (a context producer of the mode, OM1's backgrounds) and the context keys each publishes.

/**
 * A background is an input plugin run for the context values it publishes, not for its prompt line:
 * only inputs that publish context qualify. The keys are what `context_aware` rules can read.
 */
export const BACKGROUND_TYPES: ReadonlyMap<string, readonly string[]> = new Map([
  ['GpsInput', ['gps_fix', 'latitude', 'longitude', 'altitude_m']],
  [
    'BodyInput',
    [
      'battery_percent',
      'battery_low',
      'odom_x',
      'odom_y',
      'odom_heading',
      'odom_distance',
      'moving',
      'paths_clear',
      'localized',
      'map_x',
      'map_y',
      'map_heading',
      'navigating',
      'navigation_status',
    ],
  ],
  ['LidarInput', ['paths_clear', 'obstacle_ahead_m', 'lidar_blind']],
  ['PresenceInput', ['faces', 'motion', 'person_present (present_key)', 'person_approaching (approaching_key)']],
  ['BatteryInput', ['battery_percent', 'battery_status', 'battery_charging', 'battery_low']],
  ['LocalVLMInput', ['faces', 'motion']],
]);

/** The check's message for a type that cannot run as a background. */
export function notABackground(type: string): string {
  return `${JSON.stringify(type)} publishes no context values, so it cannot run as a background; backgrounds: ${[...BACKGROUND_TYPES.keys()].join(', ')} (a prompt input belongs in agent_inputs)`;
}
